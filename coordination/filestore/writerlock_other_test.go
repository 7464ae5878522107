//go:build unix && !linux

package filestore_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// holdWriterLock takes the lock a live writer holds on its temp: flock, as
// lockFD takes it off Linux, which has no OFD locks.
func holdWriterLock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}
