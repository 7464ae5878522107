package tools

import "golang.org/x/sys/unix"

// pidfdOpen gives a descriptor that polls readable once the process has
// exited, without reaping it.
func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }
