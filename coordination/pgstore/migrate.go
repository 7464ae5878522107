package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The schema is a list of embedded, numbered SQL files applied in order and
// recorded in schema_migrations: a versioned schema table rather than a
// migration library. The store only ever moves forward, from one process,
// inside one transaction; golang-migrate and goose would bring
// database/sql drivers, down-migrations and a CLI we do not use, and
// neither takes a pgx pool as is.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// appliedVersion reads the schema version the database is at.
const appliedVersion = `SELECT coalesce(max(version), 0) FROM schema_migrations`

// migrationLock is the advisory lock key migrations run under, so replicas
// starting together apply each migration once ("massgen" in ASCII).
const migrationLock int64 = 0x6d61737367656e

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, p := range names {
		base := strings.TrimPrefix(p, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s is not named NNNN_name.sql", p)
		}
		data, err := migrationFiles.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(data)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies the migrations the database has not seen, in one
// transaction under the advisory lock; it returns the schema version.
func migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// A lock_timeout the operator set for the role (meant for a step's
	// rows) must not fail a start that waits for another replica's
	// migrations: the lock is waited for as long as ctx allows, and the
	// role's bound applies again to the migrations themselves.
	var roleWait string
	if err := tx.QueryRow(ctx, `SELECT current_setting('lock_timeout')`).Scan(&roleWait); err != nil {
		return 0, fmt.Errorf("reading the role's lock_timeout: %w", err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = 0`); err != nil {
		return 0, fmt.Errorf("lifting the lock_timeout for the migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return 0, fmt.Errorf("taking the migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, roleWait); err != nil {
		return 0, fmt.Errorf("restoring the role's lock_timeout: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("creating schema_migrations: %w", err)
	}
	var have int
	if err := tx.QueryRow(ctx, appliedVersion).Scan(&have); err != nil {
		return 0, err
	}
	if last := ms[len(ms)-1].version; have > last {
		return 0, fmt.Errorf("the database's schema is version %d, newer than this binary's %d: upgrade massgen-mcp before it uses this database", have, last)
	}
	for _, m := range ms {
		if m.version <= have {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return 0, fmt.Errorf("applying migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			return 0, err
		}
		have = m.version
	}
	return have, tx.Commit(ctx)
}

// knownSchema is the schema version this binary's migrations end at.
var knownSchema = sync.OnceValues(func() (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	return ms[len(ms)-1].version, nil
})

// schemaNotAhead checks that no replica of a newer massgen-mcp has migrated
// the database past this binary since it opened it (a rolling upgrade):
// coordination.ErrServerBehind if one has.
func schemaNotAhead(ctx context.Context, c *pgxpool.Conn) error {
	known, err := knownSchema()
	if err != nil {
		return err
	}
	var have int
	if err := c.QueryRow(ctx, appliedVersion).Scan(&have); err != nil {
		return fmt.Errorf("cannot read the database's schema version: %w", err)
	}
	if have > known {
		return fmt.Errorf("%w: the database's schema is version %d, applied by a newer massgen-mcp, and this replica's is %d: it resumes no interrupted runs and answers its health check 503; restart it on the new version", coordination.ErrServerBehind, have, known)
	}
	return nil
}

// schemaVersion checks, changing nothing, that the schema is at this
// binary's version (Options.Existing) and returns it.
func schemaVersion(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	want, err := knownSchema()
	if err != nil {
		return 0, err
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, errors.New("it holds no massgen-mcp schema: point --store at the database (and search_path) a `serve --store` uses")
	}
	var have int
	if err := pool.QueryRow(ctx, appliedVersion).Scan(&have); err != nil {
		return 0, err
	}
	if have != want {
		return 0, fmt.Errorf("the database's schema is version %d and this binary's %d: use the massgen-mcp version its servers run (this command changes no schema)", have, want)
	}
	return have, nil
}
