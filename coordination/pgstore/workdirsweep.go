package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// A session's rows go with its delete (sessions prune, from any process),
// but every replica keeps its own copy of the session's files in its work
// directory (snapshots.go), and no replica hears of the delete. So a
// serving replica sweeps its work directory: at start and every sweepEvery
// after, it asks the database, a batch of ids at a time and per tenant,
// which of the sessions it holds a directory of are gone (or made again
// since its directory was made, as its marker tells), and removes those
// directories (workspace.DiscardSession: under the claim's lock, the
// marker read again, so a step of a session made again that claims the
// directory meanwhile keeps it). A directory without a marker is never
// swept: it may be from before the marker, or a file store's session on a
// state directory it shares, which the database cannot know of; a claim
// clears the first kind when its id is used again.

// sweepEvery is how often a serving replica sweeps its work directory. A
// deleted session's files stay this long at most after the prune (of a
// run's worth of files, not a disk's), and a sweep costs one indexed query
// per sweepBatch directories and a small file's read per directory: an
// hour keeps both small. Prunes are an operator's (daily, weekly), so a
// shorter period would mostly find nothing.
const sweepEvery = time.Hour

// sweepBatch is how many ids one query of a sweep asks about.
const sweepBatch = 500

// sweepTimeout bounds one sweep's queries: a database out for longer is
// an outage the next sweep outlives.
const sweepTimeout = time.Minute

// WorkDirSweep is what a sweep of the work directory did.
type WorkDirSweep struct {
	// Removed is how many deleted sessions' directories were removed, and
	// Bytes the size of the files they held; Aside how many leftovers of
	// earlier clears (a crash's, a removal that failed) were removed.
	Removed int
	Bytes   int64
	Aside   int
	// Failed is how many stale directories could not be removed (each
	// logged); they are tried again by the next sweep.
	Failed int
}

// SweepWorkDir removes from this replica's work directory the directories
// of sessions no longer in the database, every tenant's, and returns what
// it freed; with no work directory it does nothing. An error (the
// database unreachable) leaves what it did not reach for the next sweep.
func (db *DB) SweepWorkDir(ctx context.Context) (WorkDirSweep, error) {
	var sw WorkDirSweep
	if db.workDir == "" {
		return sw, nil
	}
	var errs []error
	for tenant, dir := range db.sessionsDirs() {
		if err := db.sweepSessions(ctx, tenant, dir, &sw); err != nil {
			errs = append(errs, fmt.Errorf("tenant %s: %w", tenant, err))
		}
	}
	return sw, errors.Join(errs...)
}

// sessionsDirs is each tenant's sessions directory in the work directory
// (Store.SessionsDir), by tenant: the default's and those under tenants/.
func (db *DB) sessionsDirs() map[string]string {
	dirs := map[string]string{coordination.DefaultTenant: filepath.Join(db.workDir, "sessions")}
	des, _ := os.ReadDir(filepath.Join(db.workDir, "tenants"))
	for _, de := range des {
		// The default tenant's are never under tenants/: a directory of
		// that name is not its (nor any tenant's) to sweep.
		if de.IsDir() && coordination.ValidTenant(de.Name()) && de.Name() != coordination.DefaultTenant {
			dirs[de.Name()] = filepath.Join(db.workDir, "tenants", de.Name(), "sessions")
		}
	}
	return dirs
}

// found is a session's directory a sweep found, and its marker.
type found struct {
	id, marker string
}

// sweepSessions sweeps one tenant's sessions directory.
func (db *DB) sweepSessions(ctx context.Context, tenant, dir string, sw *WorkDirSweep) error {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var dirs []found
	aside := map[string]bool{}
	for _, de := range des {
		name := de.Name()
		if id, ok := asideOf(name); ok && de.IsDir() {
			aside[id] = true
			continue
		}
		if !de.IsDir() || coordination.CheckSessionID(name) != nil {
			continue
		}
		// Read before the database is asked: a marker the database then
		// says is of a deleted incarnation is garbage for as long as it
		// reads the same (DiscardSession checks that it does).
		marker, err := workspace.Marker(filepath.Join(dir, name))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				db.log.Warn().Err(err).Str("dir", filepath.Join(dir, name)).Msg("the work directory's sweep cannot tell whose a session's directory is; kept")
			}
			continue
		}
		dirs = append(dirs, found{name, marker})
	}
	for len(dirs) > 0 {
		n := min(len(dirs), sweepBatch)
		batch := dirs[:n]
		dirs = dirs[n:]
		current, err := db.incarnations(ctx, db.spellings(tenant), batch)
		if err != nil {
			return err
		}
		for _, f := range batch {
			if err := ctx.Err(); err != nil {
				// Close waits for the sweep, and a stopping replica
				// has seconds to hand its runs over: the rest waits
				// for the next start.
				return err
			}
			if !stale(f.marker, current[f.id]) {
				continue
			}
			if db.sweepDecided != nil {
				db.sweepDecided(filepath.Join(dir, f.id))
			}
			freed, removed, err := workspace.DiscardSession(filepath.Join(dir, f.id), f.marker, true)
			if err != nil {
				sw.Failed++
				db.log.Warn().Err(err).Str("tenant", tenant).Str("session", f.id).Msg("could not remove a deleted session's directory from the work directory; the next sweep tries again")
			}
			if removed {
				sw.Removed++
				sw.Bytes += freed
				delete(aside, f.id) // its removal cleared them
			}
		}
	}
	// Leftovers of an id whose directory was cleared and not made again:
	// what a crash or a failed removal left hidden, which no claim of that
	// id would ever come back for.
	for id := range aside {
		sw.Aside += len(workspace.ClearAside(filepath.Join(dir, id)))
	}
	return nil
}

// asideOf is the session id whose directory name was moved aside to
// (.<id>.stale-<random>, workspace's moveAside), if it is such a name.
func asideOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ".stale-")
	return id, ok && coordination.CheckSessionID(id) == nil
}

// spellings are the tenants whose sessions a directory tenants/<tenant>
// may hold on this replica: tenant, and each tenant opened here whose name
// equals it but for letter case. Two such spellings opened before either
// had a directory both pass For's check, and on a case-insensitive
// filesystem their workspaces then share one directory, which a sweep
// lists once, by the name it has on disk: asked after that spelling's
// sessions alone, it would remove the other's live ones as deleted.
func (db *DB) spellings(tenant string) []string {
	out := []string{tenant}
	db.mu.Lock()
	defer db.mu.Unlock()
	for t := range db.tenants {
		if t != tenant && t != coordination.DefaultTenant && strings.EqualFold(t, tenant) {
			out = append(out, t)
		}
	}
	return out
}

// incarnations is, of the batch's ids, those the tenants have a session
// of, each with the incarnations of its sessions (their setups' creation
// times, which a directory's marker holds: coordination's incarnation):
// one query.
func (db *DB) incarnations(ctx context.Context, tenants []string, batch []found) (map[string][]string, error) {
	ids := make([]string, len(batch))
	for i, f := range batch {
		ids[i] = f.id
	}
	rows, err := db.pool.Query(ctx, `SELECT id, coalesce(setup->>'created_at', '') FROM sessions WHERE tenant = ANY($1) AND id = ANY($2)`, tenants, ids)
	if err != nil {
		return nil, fmt.Errorf("asking which sessions are gone: %w", err)
	}
	current := map[string][]string{}
	var id, created string
	if _, err := pgx.ForEachRow(rows, []any{&id, &created}, func() error {
		current[id] = append(current[id], created)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("asking which sessions are gone: %w", err)
	}
	return current, nil
}

// stale tells whether a directory marked marker holds a deleted session's
// files, given the incarnations of the sessions of its id (incarnations):
// only if it is stale for each of them (workspace.Stale).
func stale(marker string, incs []string) bool {
	if len(incs) == 0 {
		return workspace.Stale(marker, true, false, "")
	}
	for _, inc := range incs {
		if !workspace.Stale(marker, true, true, inc) {
			return false
		}
	}
	return true
}

// sweepWorkDir sweeps the work directory at start and every sweepEvery
// until ctx ends, logging what it freed; a failure is logged and the
// server goes on.
func (db *DB) sweepWorkDir(ctx context.Context) {
	defer db.done.Done()
	once := func() {
		sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
		defer cancel()
		sw, err := db.SweepWorkDir(sctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			db.log.Warn().Err(err).Str("dir", db.workDir).Msg("could not sweep deleted sessions' directories from the work directory; trying again in an hour")
		}
		if sw.Removed > 0 || sw.Aside > 0 {
			db.log.Info().Int("sessions", sw.Removed).Int64("bytes", sw.Bytes).Int("leftovers", sw.Aside).Str("dir", db.workDir).Msg("removed deleted sessions' directories from the work directory")
		}
	}
	once()
	every(ctx, sweepEvery, once)
}
