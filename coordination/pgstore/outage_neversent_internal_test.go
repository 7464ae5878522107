package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAStatementNeverSentIsAnOutageOnlyWhenPgxSaysSo pins what unavailable
// makes of a statement whose context had ended before pgx sent it, against
// a real database, on the store's own pool, for each way the store sends
// one:
//   - a pooled call (pool.Exec, SendBatch, QueryRow): the pool's acquire
//     returns the context's bare error. A cancelled context is no outage
//     (pgx does not say it is safe to retry); a deadline run out is one
//     (context.DeadlineExceeded is a net.Error that times out).
//   - a held connection (a landing's, readThenWrite's second batch): pgconn
//     refuses it as "timeout: context already done", safe to retry: an
//     outage, for a cancelled context as for a deadline.
//
// Nothing of any of them reached the database, and the held connection
// still answers. A statement cancelled while it ran, which was sent, is
// no outage on either path.
func TestAStatementNeverSentIsAnOutageOnlyWhenPgxSaysSo(t *testing.T) {
	bg := context.Background()
	db, err := Open(bg, pgtest.Schema(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.pool.Exec(bg, `CREATE TABLE never_sent (path text)`); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, stop := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer stop()
	conn, err := db.pool.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	const insert = `INSERT INTO never_sent VALUES ($1)`
	tx := func(path string) *pgx.Batch {
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue(insert, path)
		b.Queue("COMMIT")
		return b
	}
	for _, c := range []struct {
		path   string
		ctx    context.Context
		run    func(ctx context.Context, path string) error
		outage bool
	}{
		{"a pooled Exec, its context cancelled", cancelled, func(ctx context.Context, path string) error {
			_, err := db.pool.Exec(ctx, insert, path)
			return err
		}, false},
		{"a pooled batch, its context cancelled", cancelled, func(ctx context.Context, path string) error {
			return db.pool.SendBatch(ctx, tx(path)).Close()
		}, false},
		{"a pooled QueryRow, its context cancelled", cancelled, func(ctx context.Context, path string) error {
			return db.pool.QueryRow(ctx, insert+` RETURNING path`, path).Scan(new(string))
		}, false},
		{"a pooled Exec, its deadline run out", expired, func(ctx context.Context, path string) error {
			_, err := db.pool.Exec(ctx, insert, path)
			return err
		}, true},
		{"a held connection's Exec, its context cancelled", cancelled, func(ctx context.Context, path string) error {
			_, err := conn.Exec(ctx, insert, path)
			return err
		}, true},
		{"a held connection's batch, its context cancelled", cancelled, func(ctx context.Context, path string) error {
			return conn.SendBatch(ctx, tx(path)).Close()
		}, true},
		{"a held connection's Exec, its deadline run out", expired, func(ctx context.Context, path string) error {
			_, err := conn.Exec(ctx, insert, path)
			return err
		}, true},
	} {
		err := c.run(c.ctx, c.path)
		if err == nil || !errors.Is(err, c.ctx.Err()) {
			t.Errorf("%s: %v, want the context's %v", c.path, err, c.ctx.Err())
			continue
		}
		if got := unavailable(err); got != c.outage {
			t.Errorf("%s: unavailable(%q) = %v, want %v (pgx's safe to retry: %v)", c.path, err, got, c.outage, pgconn.SafeToRetry(err))
		}
	}
	var sent []string
	rows, err := conn.Query(bg, `SELECT path FROM never_sent`)
	if err == nil {
		sent, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatalf("the held connection after its refused statements: %v", err)
	}
	if len(sent) != 0 {
		t.Fatalf("statements never sent reached the database: %q", sent)
	}

	// Sent, then cancelled while it ran: no outage, pooled or held.
	held, err := db.pool.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	for _, c := range []struct {
		path string
		exec func(ctx context.Context, sql string) (pgconn.CommandTag, error)
	}{
		{"a pooled Exec", func(ctx context.Context, sql string) (pgconn.CommandTag, error) { return db.pool.Exec(ctx, sql) }},
		{"a held connection's Exec", func(ctx context.Context, sql string) (pgconn.CommandTag, error) { return held.Exec(ctx, sql) }},
	} {
		marker := "massgen_cancelled_while_it_ran_" + strings.ReplaceAll(strings.ToLower(c.path), " ", "_")
		marker = strings.Map(func(r rune) rune {
			if r == '_' || (r >= 'a' && r <= 'z') {
				return r
			}
			return -1
		}, marker)
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() {
			_, err := c.exec(ctx, `SELECT pg_sleep(60) AS `+marker)
			done <- err
		}()
		running := func() bool {
			var n int
			err := db.pool.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity
				WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%' || $1 || '%'`, marker).Scan(&n)
			return err == nil && n > 0
		}
		deadline := time.Now().Add(20 * time.Second)
		for !running() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if !running() {
			cancel()
			t.Fatalf("%s: the statement never showed as running", c.path)
		}
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the cancelled statement did not return", c.path)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled while it ran: %v, want context.Canceled", c.path, err)
		} else if unavailable(err) {
			t.Errorf("%s cancelled while it ran: unavailable(%q) = true, want false", c.path, err)
		}
	}
}
