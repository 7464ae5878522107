//go:build linux

package nodump

import (
	"os"
	"syscall"
)

// Err is why the process could not be made non-dumpable, if it could not.
var Err error

// The earliest a Go program can act: this package needs only syscall, and
// initializes within a couple of milliseconds of the start, where a prctl
// in main's PersistentPreRun left the environment readable for 60-85 ms
// (the mcp package's schemas alone take 21 ms to initialize), which a
// process of the same user polling /proc read thousands of times. What
// remains (execve and the runtime's start, some 4-8 ms on a loaded host) no
// code of the process can close: keys kept out of the environment can. A
// test binary of package main (go test names it *.test) is left dumpable,
// as it was: importing testing (or strings) to ask would put this init
// behind their imports, milliseconds later.
func init() {
	if a := os.Args[0]; len(a) < 5 || a[len(a)-5:] != ".test" {
		Err = Set(false)
	}
}

// Set makes the process dumpable or not (prctl PR_SET_DUMPABLE).
func Set(dumpable bool) error {
	v := uintptr(0)
	if dumpable {
		v = 1
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, 4 /* PR_SET_DUMPABLE */, v, 0); e != 0 {
		return e
	}
	return nil
}
