package pgstore

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A measure of the session's size that fails (a statement_timeout over a
// large session, a damaged value) costs the prune its figure, not its
// delete: the size is measured under a savepoint, and the session goes.
func TestASizeThatCannotBeMeasuredStillDeletesTheSession(t *testing.T) {
	a, _ := replicasSharing(t, "s")
	ctx := context.Background()
	measure := sessionSize
	sessionSize = `SELECT (1 / (SELECT count(*) - count(*) FROM sessions WHERE tenant = $1 AND id = $2))::bigint` // division by zero
	defer func() { sessionSize = measure }()
	size, err := a.DeleteSessionSized(ctx, "s")
	if err != nil || size != 0 {
		t.Fatalf("deleting a session whose size cannot be measured: %d, %v; want it deleted, 0 B", size, err)
	}
	if _, err := a.Session(ctx, "s"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("the session after its delete: %v, want not found", err)
	}
}

// A session holding a 2 MiB answer no compressor shrinks (TOASTed out of
// its row) is sized at what its rows keep, about 2 MiB, by a dry run and by
// the delete alike, and the measure reads none of the TOASTed values: a
// whole row's pg_column_size built it as a composite, fetching every
// value out of the TOAST tables to measure a session about to go.
func TestALargeSessionIsSizedWithoutReadingItsValues(t *testing.T) {
	const big = 2 << 20
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	answer := base64.StdEncoding.EncodeToString(bigFile(big*3/4, 1))
	if _, err := l.Append(ctx, coordination.Entry{Agent: "agent_a", Kind: coordination.KindAnswer, Content: answer}); err != nil {
		t.Fatal(err)
	}
	l.Release()

	tx, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// This transaction's reads of the schema's TOAST tables, in blocks.
	toastRead := func() int64 {
		var n int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(pg_stat_get_xact_blocks_fetched(c.reltoastrelid)), 0)::bigint
			FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
			WHERE ns.nspname = current_schema() AND c.reltoastrelid <> 0`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := toastRead()
	var measured int64
	if err := tx.QueryRow(ctx, sessionSize, a.tenant, "s").Scan(&measured); err != nil {
		t.Fatal(err)
	}
	if read := toastRead() - before; read != 0 {
		t.Errorf("measuring the session read %d blocks of TOASTed values; want none", read)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	if measured < big || measured > big+64<<10 {
		t.Errorf("the session of a %d B answer measured %d B; want its stored size, %d B and a few KiB of rows", big, measured, big)
	}
	dry, err := a.SessionBytes(ctx, "s")
	if err != nil || dry != measured {
		t.Errorf("a dry run's size: %d, %v; want %d", dry, err, measured)
	}
	deleted, err := a.DeleteSessionSized(ctx, "s")
	if err != nil || deleted != measured {
		t.Errorf("the delete's size: %d, %v; want %d, the size it deleted", deleted, err, measured)
	}
}

// TestSessionSizeMeasuresEveryColumn: sessionColumns names every column of
// every table sessionSize measures, as the migrations leave the schema, and
// no column the schema no longer has (whose measure would fail, costing
// every prune its figure).
func TestSessionSizeMeasuresEveryColumn(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	want := []string{"sessions"}
	for _, table := range sessionTables {
		if table != "locks" {
			want = append(want, table)
		}
	}
	for _, table := range want {
		rows, err := a.db.pool.Query(ctx, `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 ORDER BY column_name`, table)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		named := slices.Sorted(slices.Values(sessionColumns[table]))
		if !slices.Equal(cols, named) {
			t.Errorf("%s has the columns %v; sessionColumns names %v", table, cols, named)
		}
	}
	if len(sessionColumns) != len(want) {
		t.Errorf("sessionColumns names %d tables; sessionSize measures %d", len(sessionColumns), len(want))
	}
}
