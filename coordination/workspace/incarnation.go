package workspace

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// A replica's directory of a session kept elsewhere (Team.Remote) is a
// cache, and a session id outlives its session: one deleted (sessions
// prune) may be created again under the same id, and its directory here
// still holds the deleted one's workspaces, snapshots and base, which the
// new one would take for its own (its agents' work, its answers' files)
// and name in its manifests (blobs the prune collected). So the directory
// says whose it is: IncarnationName holds Team.Incarnation, written as the
// directory is made; a Team of another incarnation moves it aside and
// starts an empty one before it reads or writes anything there.

// IncarnationName is the file in a session's directory naming the
// incarnation its content belongs to (Team.Incarnation).
const IncarnationName = ".incarnation"

// claims serialises the checks of one directory in this process: of two
// steps opening a session made again, one moves the old directory aside
// and the other finds the new one, never moving it aside in turn. A fixed
// set of locks, a directory's chosen by its name's hash: one a directory
// would grow with every session the process ever opened.
var claims [64]sync.Mutex

// claimLock is the lock of dir's checks.
func claimLock(dir string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return &claims[h.Sum32()%uint32(len(claims))]
}

// claim makes Dir this incarnation's, once per Team: a directory holding
// another's (or an unmarked one, which cannot say whose it is) is renamed
// aside, whole, then removed, so a crash leaves the old content under a
// hidden name no session reads, never half of it in use; an empty
// directory is then made with its marker. A Team without an Incarnation
// keeps Dir as it is (the file store's directory is the session itself).
func (t *Team) claim() error {
	if t.Incarnation == "" || t.claimed.Load() {
		return nil
	}
	// What was moved aside is removed once the lock is let go: the locks
	// are shared among directories, and a large workspace takes a while.
	moved := ""
	defer func() {
		if moved != "" {
			sweepAside(t.Dir)
		}
	}()
	mu := claimLock(t.Dir)
	mu.Lock()
	defer mu.Unlock()
	if t.claimed.Load() {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(t.Dir, IncarnationName))
	switch {
	case err == nil && string(data) == t.Incarnation:
		t.claimed.Store(true)
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot tell whose files the session's directory %s holds: %w", t.Dir, err)
	case err == nil && later(string(data), t.Incarnation):
		// The directory is a later session's of the id: this Team's
		// session was deleted and made again since its setup was read (a
		// setup kept from before), and must not clear the new one's work.
		return fmt.Errorf("%w: its id names a session made again since this one was read (at %s, this one at %s); read the session again", ErrStaleIncarnation, string(data), t.Incarnation)
	}
	if moved, err = moveAside(t.Dir); err != nil {
		return fmt.Errorf("cannot clear the files an earlier session of the same id left in %s: %w", t.Dir, err)
	}
	if err := os.MkdirAll(t.Dir, stateDirMode); err != nil {
		return err
	}
	// Written last: a crash before it leaves an unmarked directory,
	// which the next claim clears.
	if err := wholefile.Replace(filepath.Join(t.Dir, IncarnationName), []byte(t.Incarnation), stateFileMode); err != nil {
		return err
	}
	if err := wholefile.SyncDir(filepath.Dir(t.Dir)); err != nil {
		return err
	}
	t.claimed.Store(true)
	return nil
}

// ErrStaleIncarnation refuses a Team whose session was deleted and made
// again under its id since the Team's setup was read.
var ErrStaleIncarnation = errors.New("the session's files here are a later session's")

// later tells whether incarnation a was made after b. Both are creation
// times (RFC 3339); one that does not parse is never later, so a marker
// that cannot say is cleared as before.
func later(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339Nano, a)
	tb, errB := time.Parse(time.RFC3339Nano, b)
	return errA == nil && errB == nil && ta.After(tb)
}

// moveAside renames dir, if it is there, to a hidden name beside it
// (.<name>.stale-<random>, never a session id) and returns that name ("" if
// dir was not there); sweepAside removes it.
func moveAside(dir string) (moved string, err error) {
	parent := filepath.Dir(dir)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	trash, err := os.MkdirTemp(parent, staleAside(dir))
	if err != nil {
		return "", err
	}
	if err := os.Rename(dir, filepath.Join(trash, "old")); err != nil {
		os.Remove(trash)
		return "", err
	}
	return trash, wholefile.SyncDir(parent)
}

// staleAside is the prefix of the names dir is moved aside to.
func staleAside(dir string) string { return "." + filepath.Base(dir) + ".stale-" }

// sweepAside removes what was moved aside from dir, with any such
// directory a crash left before. What cannot be removed now (a file
// another process holds open on a system that refuses that) stays hidden,
// and goes with the next clear. It returns the paths removed.
func sweepAside(dir string) []string {
	prefix := staleAside(dir)
	parent := filepath.Dir(dir)
	return wholefile.SweepFunc(parent, func(de fs.DirEntry) bool {
		return de.IsDir() && strings.HasPrefix(de.Name(), prefix) && !movingAside(filepath.Join(parent, de.Name()), de)
	})
}

// movingAside tells whether aside, a directory moveAside made, may be one
// a claim is moving its directory into now: empty, and made within the
// last minute. moveAside makes it and renames into it under the claim
// lock, but sweeps run with the lock let go (a claim's, DiscardSession's),
// and removing the empty directory between the two would fail that
// rename, and the claim. An empty one a crash left goes with a sweep a
// minute later.
func movingAside(aside string, de fs.DirEntry) bool {
	info, err := de.Info()
	if err != nil || time.Since(info.ModTime()) > time.Minute {
		return false
	}
	f, err := os.Open(aside)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}
