//go:build linux

package filestore

import (
	"io"
	"io/fs"

	"golang.org/x/sys/unix"
)

// fileLock is a held exclusive open-file-description (OFD) lock. OFD locks
// belong to the open file description, not the process: two descriptors opened
// separately conflict even inside one process (so goroutines and processes are
// alike), closing an unrelated descriptor of the same file does not drop them
// (unlike classic POSIX locks), and the kernel drops them when the holder dies.
// Descriptors are opened O_CLOEXEC so CLI agents we spawn never inherit a lock.
type fileLock struct{ fd int }

// tryLock takes the lock on path (creating the file) without waiting; ok is
// false if another open file description holds it.
func tryLock(path string) (l *fileLock, ok bool, err error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, uint32(fileMode))
	if err != nil {
		return nil, false, lockOpenError(path, err)
	}
	if err := regularFD(fd, path); err != nil {
		unix.Close(fd)
		return nil, false, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	for {
		err = unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
		if err != unix.EINTR {
			break
		}
	}
	if err == nil {
		return &fileLock{fd: fd}, true, nil
	}
	unix.Close(fd)
	if err == unix.EAGAIN || err == unix.EACCES {
		return nil, false, nil
	}
	return nil, false, &fs.PathError{Op: "lock", Path: path, Err: err}
}

// release drops the lock by closing its description.
func (l *fileLock) release() { unix.Close(l.fd) }

// isLocked asks the kernel whether anyone holds the lock on path, without
// taking it (F_OFD_GETLK), so looking never makes a starting step busy.
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
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	for {
		err = unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return false, &fs.PathError{Op: "getlk", Path: path, Err: err}
	}
	return lk.Type != unix.F_UNLCK, nil
}

// lockFD takes the lock on an open file without waiting; writeDerived holds
// it on its temp file, so a temp nobody holds is a dead writer's.
func lockFD(fd int) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	for {
		err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}
