//go:build unix

package filestore

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// block is the unit a write's need is rounded up to: a file costs at least
// one block and its directory entry may cost another.
const block = 4096

// diskFull turns a write that ran out of space (ENOSPC, or EDQUOT for a
// quota) into a *coordination.DiskFullError naming the directory, the space
// the write needed and the space left; any other error comes back as it is.
func diskFull(err error, dir string, size int) error {
	if err == nil || !(errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		return err
	}
	var already *coordination.DiskFullError
	if errors.As(err, &already) {
		return err
	}
	need := (int64(size)/block + 2) * block
	return &coordination.DiskFullError{Path: dir, Need: need, Free: freeBytes(dir), Err: err}
}

// freeBytes is the space an unprivileged writer may still use in dir's
// filesystem, -1 if it cannot be told.
func freeBytes(dir string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize) //nolint:unconvert // the field types differ between systems
}
