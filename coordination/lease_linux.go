//go:build linux

package coordination

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// ProcessStart is a process's start time in clock ticks since boot, field 22
// of /proc/<pid>/stat; ok is false if it cannot be read.
func ProcessStart(pid int) (start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseProcStart(b)
}

// parseProcStart reads the start time from a /proc/<pid>/stat line. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from its last ')'.
func parseProcStart(b []byte) (uint64, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // from field 3 (state) on
	if len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(f[19]), 10, 64)
	return n, err == nil
}

// ProcessGone tells whether the process a lease on this host names has
// ended: no process has its pid (the kernel says so, not only /proc, which
// may hide a live one), the one that has it started at another time (the
// pid was reused), or it is a zombie not yet reaped. Where that cannot be
// known it says false, and the lease's expiry decides.
func ProcessGone(pid int, start uint64) bool {
	return processGone("/proc", pid, start)
}

// processGone is ProcessGone reading the proc file system mounted at proc.
func processGone(proc string, pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(proc + "/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		// /proc also hides live processes (hidepid=2 hides another
		// user's): only the kernel's "no such process" says gone.
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	if err != nil {
		return false
	}
	// A zombie (killed or exited, its parent has not reaped it yet) keeps
	// its stat line, start time and all, but runs nothing and holds no
	// lock: it is gone, whoever it was.
	if zombie(b) {
		return true
	}
	now, ok := parseProcStart(b)
	return ok && start != 0 && now != start
}

// zombie tells whether a /proc/<pid>/stat line is a process that has
// ended: state (field 3) Z, a zombie, or X, dead.
func zombie(b []byte) bool {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := bytes.Fields(b[i+1:])
	return len(f) > 0 && (f[0][0] == 'Z' || f[0][0] == 'X')
}
