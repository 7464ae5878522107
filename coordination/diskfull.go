package coordination

import (
	"errors"
	"fmt"
)

// ErrDiskFull is a write refused for lack of space (ENOSPC, EDQUOT). Nothing
// half-written is left behind, so the session resumes once space is freed.
var ErrDiskFull = errors.New("no space left on the disk")

// DiskFullError says where a write ran out of space and how much it needed.
type DiskFullError struct {
	Path string // the directory being written
	Need int64  // bytes the write needed, rounded up to whole blocks
	Free int64  // bytes free for this process when it failed (-1 unknown)
	Err  error  // the system's error
}

func (e *DiskFullError) Error() string {
	free := "unknown"
	if e.Free >= 0 {
		free = fmt.Sprintf("%d bytes", e.Free)
	}
	return fmt.Sprintf("no space left on the disk holding %s: the write needs %d bytes more (free: %s); free some space, then resume the session", e.Path, e.Need, free)
}

// Unwrap lets errors.Is match ErrDiskFull and the system's error.
func (e *DiskFullError) Unwrap() []error { return []error{ErrDiskFull, e.Err} }
