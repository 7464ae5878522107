package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// A replica's directory of a session kept elsewhere outlives the session:
// deleting it (sessions prune) deletes its rows, and a claim clears the
// directory only if a session is made again under its id and opened here.
// A replica running for months would keep every deleted session's
// workspaces, snapshots and base. So the replica sweeps its directories
// (pgstore's sweep, which asks the database which sessions are gone) and
// the service's prune drops its own copy (Team.DiscardDir); both remove a
// directory as a claim clears one, by the same lock and the same move
// aside, so a step opening it at that moment either finds it gone (and
// makes an empty one) or has made it its own first (and it stays), and a
// crash leaves it under a hidden name no session reads.

// Marker is the incarnation dir's marker names (IncarnationName); an error
// that is fs.ErrNotExist when dir holds none (a directory from before the
// marker, a crash before it was written, or no directory).
func Marker(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, IncarnationName))
	return string(data), err
}

// Stale tells whether a directory whose marker reads marker (marked false:
// it has none) holds a deleted session's files, given whether a session
// has its id now (exists) and that session's incarnation (current): none
// has it, or it was made again after the marker's. A marker or a current
// incarnation that does not parse is never earlier, as for a claim, and
// an unmarked directory of an id a session has is left to that session's
// claim, which clears it.
func Stale(marker string, marked, exists bool, current string) bool {
	switch {
	case !exists:
		return true
	case !marked:
		return false
	}
	return later(current, marker)
}

// DiscardSession removes dir, a session's directory, if it still holds what the
// caller found there, marker's incarnation (marked false: no marker), when
// it decided that session is gone: checked again under the claim lock, so
// a step of a session made again that claimed it meanwhile (its marker
// changed) keeps it whole. It is renamed aside under the lock and removed
// after, read-only directories in it too (wholefile.RemoveAll); a removal
// that fails leaves it hidden, for the next clear of that id. freed is the
// size of the files removed; removed says it was moved aside.
func DiscardSession(dir, marker string, marked bool) (freed int64, removed bool, err error) {
	mu := claimLock(dir)
	mu.Lock()
	now, err := Marker(dir)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		mu.Unlock()
		return 0, false, err
	case (err == nil) != marked || now != marker:
		mu.Unlock()
		return 0, false, nil
	}
	trash, err := moveAside(dir)
	mu.Unlock()
	if err != nil || trash == "" {
		return 0, false, err
	}
	freed = treeBytes(trash)
	if err := wholefile.RemoveAll(trash); err != nil {
		return 0, true, err
	}
	sweepAside(dir)
	return freed, true, nil
}

// DiscardDir removes the Team's directory once its session is deleted (the
// service's prune): if it holds this incarnation's files or an earlier
// one's, never a later session's of the id (made again since, here or
// elsewhere, and claimed here meanwhile), nor one that does not say whose
// it is (no marker: as the sweep, it leaves what the database cannot
// vouch for, such as a file store's session of the same id in a state
// directory it shares).
func (t *Team) DiscardDir() (freed int64, removed bool, err error) {
	if t.Incarnation == "" {
		return 0, false, nil // the file store's: its delete removes it
	}
	marker, err := Marker(t.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	case marker != t.Incarnation && !later(t.Incarnation, marker):
		return 0, false, nil
	}
	freed, removed, err = DiscardSession(t.Dir, marker, true)
	if removed {
		// A Team kept past the delete must claim again to write here.
		t.claimed.Store(false)
	}
	return freed, removed, err
}

// ClearAside removes what a claim or DiscardSession moved aside from dir and a
// crash left (sweepAside), for a sweep that finds such leftovers of an id
// whose directory is gone; it returns the paths removed.
func ClearAside(dir string) []string { return sweepAside(dir) }

// treeBytes is the size of the regular files under dir, what removing it
// frees give or take the blocks' rounding; an entry it cannot read counts
// nothing (the figure is reported, not relied on).
func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
