package filestore_test

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// holdWriterLock takes the lock a live writer holds on its temp: an OFD
// lock, as lockFD takes it on Linux.
func holdWriterLock(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}
