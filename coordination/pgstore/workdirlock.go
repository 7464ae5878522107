//go:build unix

package pgstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// A replica's work directory holds its copies of the sessions' workspaces,
// its agents' live workspaces among them, and it clears a directory a
// deleted session left before a session made again under its id uses it
// (incarnation.go). Two processes on one work directory would clear and
// write each other's: the second is refused at Open. The lock is flock(2)'s
// on a file in the directory, held by the open file description, so a
// second DB in the same process is refused too, and a killed replica's
// lock goes with it.

// workDirLockName is the lock file in a work directory.
const workDirLockName = ".replica.lock"

// ErrWorkDirInUse refuses a work directory another process (or DB) on the
// store holds.
var ErrWorkDirInUse = errors.New("the work directory is in use by another replica")

// flock is flock(2): a variable so a test can be a file system that keeps
// no locks, which the machines the tests run on are not.
var flock = unix.Flock

// lockWorkDir takes dir's lock, creating dir if need be, and returns its
// release; "" takes nothing. A file system that keeps no such locks (some
// network and FUSE mounts) is told of in log and used unlocked, as before
// there was a lock.
func lockWorkDir(dir string, log zerolog.Logger) (release func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the work directory %s: %w", dir, err)
	}
	workspace.CloseToOthers(dir, filepath.Join(dir, "sessions"), filepath.Join(dir, "tenants"))
	path := filepath.Join(dir, workDirLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the work directory's lock %s: %w", path, err)
	}
	if err := flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		switch {
		case errors.Is(err, unix.EWOULDBLOCK):
			return nil, fmt.Errorf("%w: %s is held by another process serving this store (or another store in this one); give each replica a directory of its own (serve --state-dir), or its agents' workspaces would be cleared and written under each other", ErrWorkDirInUse, dir)
		case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			log.Warn().Err(err).Str("dir", dir).Msg("the work directory's file system keeps no locks: nothing stops a second replica on it, which must have a directory of its own")
			return func() {}, nil
		}
		return nil, fmt.Errorf("cannot lock the work directory %s: %w", dir, err)
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil
}
