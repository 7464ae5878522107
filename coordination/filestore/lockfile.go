package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock files are opened without blocking and without following a symlink,
// and must be regular: a FIFO put in place of .step.lock would otherwise
// block every status, fsck and resume that tests the lock.

// regularFD refuses a lock file that is not a regular file.
func regularFD(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return damaged(path, errors.New("the lock file is not a regular file; fsck --repair moves it aside (a lock file holds no data)"))
	}
	return nil
}

func lockOpenError(path string, err error) error {
	if errors.Is(err, unix.EISDIR) {
		return damaged(path, fmt.Errorf("the lock file is a directory; fsck --repair moves it aside (a lock file holds no data)"))
	}
	if errors.Is(err, unix.ELOOP) {
		return damaged(path, fmt.Errorf("the lock file is a symlink; fsck --repair moves it aside (a lock file holds no data)"))
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// badLocks lists the lock files of a session that exist but are not
// regular files: the session's and each agent's.
func badLocks(dir string, agents []string) []string {
	paths := []string{filepath.Join(dir, ".session.lock"), filepath.Join(dir, ".run.lock")}
	for _, a := range agents {
		paths = append(paths, filepath.Join(dir, "agents", a, ".step.lock"))
	}
	var bad []string
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			bad = append(bad, p)
		}
	}
	return bad
}
