package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var (
	_ coordination.SessionDeleter   = (*Store)(nil)
	_ coordination.SizingDeleter    = (*Store)(nil)
	_ coordination.SessionSizer     = (*Store)(nil)
	_ coordination.GarbageCollector = (*Store)(nil)
)

// sessionTables are the tables holding a session's rows (every table with a
// session_id column; TestDeleteLeavesNoRowOfTheSessionInAnyTable reads the
// schema for any this misses), children before their parents. The foreign
// keys cascade as well, but naming each table keeps the delete visible and
// tenant-scoped where it is read, not only in the migrations.
var sessionTables = []string{
	"tool_records", "approval_responses", "approval_requests", "permission_log", "questions",
	"snapshots", "usage", "shared_spend", "spend_holds", "events", "event_counters", "views", "leases", "locks", "entries", "session_log",
}

// DeleteSession implements coordination.SessionDeleter: one transaction
// deletes the session's rows from every table, for this tenant only. The
// session's row is locked first, so a landing, which takes it FOR SHARE
// through its foreign key, either committed before (and is deleted with
// the rest) or waits and then finds no session. The blobs its snapshots
// and images named stay, shared by the tenant's other sessions, until
// CollectGarbage finds them unreferenced.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := s.DeleteSessionSized(ctx, id)
	return err
}

// DeleteSessionSized implements coordination.SizingDeleter: DeleteSession,
// returning the stored size of the rows it deleted (sessionSize), measured
// in its transaction once the session's row is locked, so nothing lands
// between the measure and the delete.
func (s *Store) DeleteSessionSized(ctx context.Context, id string) (int64, error) {
	if err := live(ctx, id); err != nil {
		return 0, err
	}
	var size int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM sessions WHERE tenant = $1 AND id = $2 FOR UPDATE`, s.tenant, id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		// Measured under a savepoint: a measure that fails (a role's
		// statement_timeout over a large session, a damaged value) costs
		// the report its figure, not the prune its delete.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return err
		}
		if err := sp.QueryRow(ctx, sessionSize, s.tenant, id).Scan(&size); err != nil {
			size = 0
			if rerr := sp.Rollback(ctx); rerr != nil {
				return rerr
			}
			s.db.log.Warn().Err(err).Str("session", id).Msg("could not measure a session's stored size; it is deleted all the same and counted as 0 B")
		} else if err := sp.Commit(ctx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, keepLeaseFloor, s.tenant, id); err != nil {
			return fmt.Errorf("keeping the lease floor: %w", err)
		}
		for _, t := range sessionTables {
			if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE tenant = $1 AND session_id = $2`, s.tenant, id); err != nil {
				return fmt.Errorf("deleting from %s: %w", t, err)
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM sessions WHERE tenant = $1 AND id = $2`, s.tenant, id)
		return err
	})
	if errors.Is(err, coordination.ErrSessionNotFound) {
		return 0, err
	}
	// Its lock rows went with it (or may have, the commit unknown): a
	// session lock held through the delete is not passed on
	// (sessionlock.go), nor are they renewed, or put back for a session
	// made again under the same id.
	s.db.held.forgetSession(s.tenant, id)
	if err != nil {
		return 0, fmt.Errorf("deleting session %q from the PostgreSQL store: %w", id, err)
	}
	s.db.loans.forget(s.tenant, id)
	s.db.written.forget(s.tenant, id)
	return size, nil
}

// keepLeaseFloor keeps, past the session's deletion, the highest version
// its leases reached (migration 22): a session created again under its id
// begins its leases above it, so a run of the deleted one that still
// thinks it holds a claim can neither renew, release nor fence by it in
// the new one. Its own floor counts too, for a session deleted twice
// whose second life claimed nothing above it.
const keepLeaseFloor = `INSERT INTO lease_floors (tenant, session_id, version, deleted_at)
	SELECT $1, $2, max(v), now() FROM (
		SELECT version AS v FROM leases WHERE tenant = $1 AND session_id = $2
		UNION ALL SELECT version FROM lease_floors WHERE tenant = $1 AND session_id = $2) vs
	HAVING max(v) IS NOT NULL
	ON CONFLICT (tenant, session_id) DO UPDATE SET version = EXCLUDED.version, deleted_at = EXCLUDED.deleted_at`

// leaseFloorKept is how long a deleted session's lease floor is kept: a
// run of it cut off from the database for longer is not guarded against.
const leaseFloorKept = 30 * 24 * time.Hour

// SessionBytes implements coordination.SessionSizer: what
// DeleteSessionSized would report for the session now (a dry prune's
// measure).
func (s *Store) SessionBytes(ctx context.Context, id string) (int64, error) {
	if err := live(ctx, id); err != nil {
		return 0, err
	}
	var n int64
	if err := s.db.pool.QueryRow(ctx, sessionSize, s.tenant, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("sizing session %q in the PostgreSQL store: %w", id, err)
	}
	return n, nil
}

// sessionSize is the stored size of the tenant's ($1) session's ($2) rows
// in every table that holds them: the pg_column_size of each value, which
// counts it as kept (compressed, and a TOASTed one at its TOASTed size,
// read from its pointer), and rowHeader per row. Not pg_column_size of the
// whole row (t.*): that builds the row as a composite value, which fetches
// every TOASTed value out of the TOAST table to measure it, megabytes read
// to size a session about to go. The sum is the space their delete gives
// back to the tables for reuse; the database's files do not shrink by it
// (autovacuum makes it reusable, VACUUM FULL returns it to the system),
// and the indexes' entries and the padding between values are not
// counted. The session's rows in locks count for nothing: when it is
// deleted they are the prune's own locks, taken to delete it (a lock let
// go is no row, but for a dead step's spend not yet recorded), so a dry
// run, which takes none, measures the same session the same.
var sessionSize = func() string {
	parts := []string{tableSize("sessions", "id")}
	for _, t := range sessionTables {
		if t != "locks" {
			parts = append(parts, tableSize(t, "session_id"))
		}
	}
	return `SELECT (` + strings.Join(parts, " + ") + `)::bigint`
}()

// rowHeader is what a row takes besides its values: its tuple header
// (23 bytes, aligned to 8).
const rowHeader = 24

// tableSize is the stored size of the session's rows in table, the session
// named by its column key.
func tableSize(table, key string) string {
	sizes := make([]string, len(sessionColumns[table]))
	for i, c := range sessionColumns[table] {
		sizes[i] = `coalesce(pg_column_size(` + c + `), 0)` // NULL: no value stored
	}
	return fmt.Sprintf(`(SELECT coalesce(sum(%d + %s), 0) FROM %s WHERE tenant = $1 AND %s = $2)`,
		rowHeader, strings.Join(sizes, " + "), table, key)
}

// sessionColumns are the columns of the tables sessionSize measures, as
// the migrations leave them (TestSessionSizeMeasuresEveryColumn reads the
// schema for any this misses or no longer has).
var sessionColumns = map[string][]string{
	"sessions":           {"tenant", "id", "created_at", "setup", "log_seq", "ready_at", "usage_entries"},
	"entries":            {"tenant", "session_id", "agent_id", "step", "kind", "at", "entry"},
	"session_log":        {"tenant", "session_id", "seq", "kind", "at", "entry"},
	"usage":              {"tenant", "session_id", "agent_id", "step", "at", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "cost_usd"},
	"shared_spend":       {"tenant", "session_id", "spender", "agent_id", "cost_usd", "tokens", "reported_at"},
	"spend_holds":        {"tenant", "session_id", "holder", "cost_usd", "tokens", "expires_at"},
	"events":             {"tenant", "session_id", "n", "at", "event"},
	"event_counters":     {"tenant", "session_id", "last"},
	"views":              {"tenant", "session_id", "agent_id", "view"},
	"tool_records":       {"tenant", "session_id", "agent_id", "step", "records"},
	"leases":             {"tenant", "session_id", "agent_id", "owner_id", "host", "pid", "proc_start", "version", "claimed_at", "renewed_at", "expires_at", "released", "ran_before_ms", "chain_from"},
	"snapshots":          {"tenant", "session_id", "agent_id", "step", "manifest"},
	"permission_log":     {"tenant", "session_id", "n", "at", "agent_id", "outcome", "record"},
	"approval_requests":  {"tenant", "session_id", "id", "asked_at", "request"},
	"approval_responses": {"tenant", "session_id", "id", "at", "approve", "response"},
	"questions":          {"tenant", "session_id", "id", "asked_at", "question", "reply", "answered_at", "closed", "run"},
}

// CollectGarbage implements coordination.GarbageCollector: it deletes this
// tenant's lease floors kept long enough, its spend holds past their
// expiry, and its blobs, and their chunks, that no snapshot manifest and no
// session's images name and that nobody stored or reused within grace. A
// snapshot being taken reuses blobs before its manifest lands, and so does
// a session's creation before its setup names its images: each touches the
// blob as it does (PutBlob, snapshots.Put), so a blob in such use is never
// older than grace. The delete re-reads a row touched while it runs, and
// keeps it.
func (s *Store) CollectGarbage(ctx context.Context, grace time.Duration) (coordination.Collected, error) {
	// A reuse touches a blob at most once per touchEvery.
	grace = max(grace, 2*touchEvery)
	var c coordination.Collected
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM lease_floors WHERE tenant = $1 AND deleted_at < now() - $2 * interval '1 millisecond'`,
			s.tenant, leaseFloorKept.Milliseconds()); err != nil {
			return fmt.Errorf("letting old lease floors go: %w", err)
		}
		// Criteria calls' holds past their expiry, left by holders that
		// died on sessions no hold was written on since (holdWrite).
		if _, err := tx.Exec(ctx, `DELETE FROM spend_holds WHERE tenant = $1 AND expires_at <= now()`, s.tenant); err != nil {
			return fmt.Errorf("letting expired spend holds go: %w", err)
		}
		return tx.QueryRow(ctx, blobCollect, s.tenant, grace.Milliseconds()).Scan(&c.Blobs, &c.Bytes)
	})
	if err != nil {
		return coordination.Collected{}, fmt.Errorf("collecting unreferenced blobs: %w", err)
	}
	return c, nil
}

// blobCollect deletes the tenant's unreferenced blobs untouched for the
// grace ($2 ms) and their chunks, and returns how many and their size. A
// manifest's files and a setup's images are JSON arrays of objects with a
// sha256 (workspace.Manifest, coordination.ImageRef); anything else there
// names nothing.
const blobCollect = `WITH referenced AS (
		SELECT f->>'sha256' AS sha256
		FROM snapshots, jsonb_array_elements(CASE WHEN jsonb_typeof(manifest::jsonb->'files') = 'array'
			THEN manifest::jsonb->'files' ELSE '[]'::jsonb END) AS f
		WHERE tenant = $1
		UNION
		SELECT i->>'sha256'
		FROM sessions, jsonb_array_elements(CASE WHEN jsonb_typeof(setup::jsonb->'images') = 'array'
			THEN setup::jsonb->'images' ELSE '[]'::jsonb END) AS i
		WHERE tenant = $1),
	gone AS (
		DELETE FROM blobs b
		WHERE b.tenant = $1 AND b.touched_at < now() - $2 * interval '1 millisecond'
			AND NOT EXISTS (SELECT 1 FROM referenced r WHERE r.sha256 = b.sha256)
		RETURNING b.sha256, b.size),
	chunks AS (
		DELETE FROM blob_chunks c USING gone WHERE c.tenant = $1 AND c.blob = gone.sha256)
	SELECT count(*), coalesce(sum(size), 0)::bigint FROM gone`
