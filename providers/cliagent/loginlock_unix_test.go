//go:build unix

package cliagent

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// lockAsAnotherProcess takes dir's lock through an open file description of
// its own, as another process's copy-back would, and returns its release.
func lockAsAnotherProcess(t *testing.T, dir string) func() {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}
