// Package lockeddir makes temporary directories a crash may leave behind
// (a server SIGKILLed, OOM-killed) removable safely by whoever comes next:
// each is held under a flock on <dir>.lock while it lives, and a sweep
// removes those whose lock is free. The kernel drops a flock when its
// holder dies, and never while it lives, so a directory in use (by this
// process or another sharing TMPDIR) is never swept. The lock is beside
// the directory, not in it, so what may write the directory (a sandboxed
// CLI or command) cannot reach it; Go opens it O_CLOEXEC, so no child
// inherits it and outlives a dead holder.
package lockeddir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

const lockSuffix = ".lock"

// Make makes a fresh directory in base (TMPDIR for "") named prefix and a
// random tail, under its lock, held until Release.
func Make(base, prefix string) (dir string, lock *os.File, err error) {
	for range 10 {
		f, err := os.CreateTemp(base, prefix+"*"+lockSuffix)
		if err != nil {
			return "", nil, err
		}
		// A sweep may have taken the lock file between its creation and
		// the flock (it was free then): the lock held must still be the
		// file at its path, else try a new name.
		if flock(f) == nil && samePath(f) {
			dir = strings.TrimSuffix(f.Name(), lockSuffix)
			if err := os.Mkdir(dir, 0o700); err != nil {
				os.Remove(f.Name())
				f.Close()
				return "", nil, err
			}
			return dir, f, nil
		}
		f.Close()
	}
	if base == "" {
		base = os.TempDir()
	}
	return "", nil, gaveUp(base, prefix)
}

// gaveUp is Make's error when sweeps took its lock file every time: a path
// error, so that a caller showing it to a model (run_command's, which
// unwraps path errors) keeps TMPDIR's path out, while a log keeps it.
func gaveUp(base, prefix string) error {
	return &fs.PathError{Op: "making a directory under its lock", Path: filepath.Join(base, prefix+"…"),
		Err: errors.New("other processes' sweeps took its lock file ten times over")}
}

// Release removes dir, each dir+sibling (files kept beside it: a CLI
// step's ".peers") and its lock, then drops the lock: a sweep that sees
// the lock free finds nothing. The lock file is kept if something was
// left, so the next sweep tries again; the error says what was.
func Release(dir string, lock *os.File, siblings ...string) error {
	errs := []error{removeAll(dir)}
	for _, s := range siblings {
		errs = append(errs, removeAll(dir+s))
	}
	err := errors.Join(errs...)
	if err == nil {
		os.Remove(lock.Name())
	}
	lock.Close()
	return err
}

// unlockedAge is how long after it was last written a directory with no
// lock file is swept. Builds before the locks made the same directories
// (os.MkdirTemp: prefix and digits) without one, and a killed run's stayed
// for good; one may still be an older build's live run (replicas sharing
// TMPDIR mid-upgrade), but no run lasts a week. This build never leaves a
// directory without its lock: the lock is made first and removed last.
const unlockedAge = 7 * 24 * time.Hour

// Sweep removes from base (TMPDIR for "") the directories named prefix…
// (with their siblings) whose lock is free: their holders died. A
// directory with no lock file (an older build's) is removed only once it
// is unlockedAge old and named as Make and os.MkdirTemp name them.
func Sweep(base, prefix string, siblings ...string) {
	if base == "" {
		base = os.TempDir()
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, de := range entries {
		name := de.Name()
		if de.IsDir() && strings.HasPrefix(name, prefix) && digits(name[len(prefix):]) {
			sweepUnlocked(filepath.Join(base, name), siblings)
			continue
		}
		if !de.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, lockSuffix) {
			continue
		}
		path := filepath.Join(base, name)
		f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			continue // another user's, or gone
		}
		if flock(f) == nil && samePath(f) {
			// The lock file goes last, and only once the rest is gone, so
			// what a removal missed is tried again at the next sweep.
			dir := strings.TrimSuffix(path, lockSuffix)
			failed := removeAll(dir) != nil
			for _, s := range siblings {
				failed = removeAll(dir+s) != nil || failed
			}
			if !failed {
				os.Remove(path)
			}
		}
		f.Close()
	}
}

// sweepUnlocked removes dir and its siblings if dir has no lock file and
// was last written unlockedAge ago: an older build's, left by a killed run.
func sweepUnlocked(dir string, siblings []string) {
	if _, err := os.Lstat(dir + lockSuffix); !os.IsNotExist(err) {
		return // locked: the lock decides
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < unlockedAge {
		return
	}
	removeAll(dir)
	for _, s := range siblings {
		removeAll(dir + s)
	}
}

// removeAll removes a held directory or sibling whole. What a sandboxed
// program wrote there is its own to chmod: a directory of mode 0 it left
// would stop os.RemoveAll for a server not run as root, and every sweep
// after. Then wholefile.RemoveAll gives the tree's directories their
// owner's bits back as it goes, following no symlink. The first error is
// the one returned: it names the path left, the second only the tree's.
func removeAll(p string) error {
	err := os.RemoveAll(p)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	if wholefile.RemoveAll(p) == nil {
		return nil
	}
	return err
}

// digits tells whether s is the random tail os.MkdirTemp and Make give a
// name: decimal digits only.
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// flock takes f's exclusive lock without waiting.
func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

// samePath tells whether f is still the file at its path.
func samePath(f *os.File) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(f.Name())
	return err == nil && os.SameFile(held, now)
}
