package cliagent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A run's step directory and its peers' files (<step dir>.peers, whole
// copies of the peers' snapshots when unsandboxed) are removed when the run
// ends (workflow.close); a server killed mid-run (SIGKILL, an OOM kill)
// leaves them, in the agent's directory, which every step touches, so the
// idle sweep never takes them. Each run therefore holds a lock on
// <step dir>.lock while they live, and the next run's start removes those
// whose lock is free: the kernel drops a flock when its holder dies, and
// never while it lives, so another step of the same agent in flight in the
// same directory (or another process's, in a shared TMPDIR) is never
// swept. The lock is beside the step directory, not in it, so a sandboxed
// CLI (which may write its step directory) cannot reach it; Go opens it
// O_CLOEXEC, so no CLI inherits it and outlives a dead server holding it.

const (
	stepPrefix = "massgen-step-"
	lockSuffix = ".lock"
)

// stepDir makes a fresh step directory in base (TMPDIR for "") under its
// lock, held until release.
func stepDir(base string) (dir string, lock *os.File, err error) {
	for range 10 {
		f, err := os.CreateTemp(base, stepPrefix+"*"+lockSuffix)
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
	return "", nil, errors.New("the step's lock file was taken by other runs' sweeps ten times over")
}

// releaseStep removes a step directory, its peers' files and its lock,
// then drops the lock: a sweep that sees the lock free finds nothing.
func releaseStep(dir string, lock *os.File) {
	os.RemoveAll(dir)
	os.RemoveAll(dir + ".peers")
	os.Remove(lock.Name())
	lock.Close()
}

// sweepSteps removes from base (TMPDIR for "") the step directories and
// peers' files of runs whose lock is free: killed runs'. A step directory
// with no lock file (an older build's) is left to the idle sweep.
func sweepSteps(base string) {
	if base == "" {
		base = os.TempDir()
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, de := range entries {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasPrefix(name, stepPrefix) || !strings.HasSuffix(name, lockSuffix) {
			continue
		}
		path := filepath.Join(base, name)
		f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			continue // another user's, or gone
		}
		if flock(f) == nil && samePath(f) {
			// The lock file goes last, and only once the rest is gone, so
			// what a removal missed is tried again at the next start.
			dir := strings.TrimSuffix(path, lockSuffix)
			errPeers, errDir := os.RemoveAll(dir+".peers"), os.RemoveAll(dir)
			if errPeers == nil && errDir == nil {
				os.Remove(path)
			}
		}
		f.Close()
	}
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
