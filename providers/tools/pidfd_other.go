//go:build !linux

package tools

import "errors"

// pidfdOpen has no equivalent off Linux: a stdio server is then never seen
// to have exited by polling (exited is always false), so its death shows
// only as its connection's error, and a stop kills it at once instead of
// giving it 2 s to exit on its stdin's end.
func pidfdOpen(int) (int, error) { return -1, errors.ErrUnsupported }
