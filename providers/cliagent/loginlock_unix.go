//go:build unix

package cliagent

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// flock is flock(2); a test stands in a file system's answers for it.
var flock = unix.Flock

// lockLoginDir takes the flock(2) lock of dir, the directory of a user's
// login file, so that copy-backs of one login by several processes (two
// servers, a `massgen-mcp run` beside one) each check and write it whole.
// The lock is the directory's own: nothing is created in the user's
// config directory. It waits up to lockWait, and tells whether it got the
// lock; a file system that keeps no locks, or none on a directory (NFS),
// is used unlocked, as before.
func lockLoginDir(dir string) (unlock func(), ok bool) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}, false
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return func() { f.Close() }, true
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EBADF):
			// EBADF: NFS and SMB emulate flock with a POSIX lock, whose
			// exclusive kind needs a file open for writing; a directory
			// is open for reading. Locks there cannot be had, as on a
			// file system without them.
			f.Close()
			return func() {}, true
		case !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline):
			f.Close()
			return func() {}, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
