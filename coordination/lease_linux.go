//go:build linux

package coordination

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
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
// ended: no process has its pid, or the one that has it started at another
// time (the pid was reused). Where that cannot be known it says false, and
// the lease's expiry decides.
func ProcessGone(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	now, ok := parseProcStart(b)
	return ok && start != 0 && now != start
}
