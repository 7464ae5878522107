//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// clone is not supported here: the file is copied.
func clone(out, src *os.File) error { return errors.ErrUnsupported }
