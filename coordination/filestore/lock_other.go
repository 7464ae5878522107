//go:build unix && !linux

package filestore

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// fileLock is a held flock(2) lock. Off Linux there are no OFD locks; flock
// locks also belong to the open file description and vanish with the process.
type fileLock struct{ fd int }

func tryLock(path string) (*fileLock, bool, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, uint32(fileMode))
	if err != nil {
		return nil, false, lockOpenError(path, err)
	}
	if err := regularFD(fd, path); err != nil {
		unix.Close(fd)
		return nil, false, err
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if err == unix.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, &fs.PathError{Op: "flock", Path: path, Err: err}
	}
	return &fileLock{fd: fd}, true, nil
}

func (l *fileLock) release() { unix.Close(l.fd) }

// isLocked has no side-effect-free test with flock: it takes a shared lock for
// an instant, which can make a step starting at that very moment busy. Linux,
// the supported platform, uses F_OFD_GETLK instead.
func isLocked(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err == unix.ENOENT {
		return false, nil
	}
	if err != nil {
		return false, lockOpenError(path, err)
	}
	defer unix.Close(fd)
	if err := regularFD(fd, path); err != nil {
		return false, err
	}
	if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if err == unix.EWOULDBLOCK {
			return true, nil
		}
		return false, &fs.PathError{Op: "flock", Path: path, Err: err}
	}
	return false, nil
}

// lockFD takes the lock on an open file without waiting; writeDerived holds
// it on its temp file, so a temp nobody holds is a dead writer's.
func lockFD(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) }
