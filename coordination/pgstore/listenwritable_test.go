package pgstore

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAListenerLeftOnAServerThatTakesNoWritesListensAgain: a failover
// behind a proxy leaves the LISTEN connection on the old primary, kept
// alive read-only, where no change is made and so none is heard. Its first
// connection here is made so (read-only, hearing nothing); after a quiet
// spell the listener asks, finds it takes no writes, and listens on a new
// one, which hears the other replica's changes. Before, it heard nothing
// for as long as the connection lived.
func TestAListenerLeftOnAServerThatTakesNoWritesListensAgain(t *testing.T) {
	dsn := pgtest.Schema(t)
	var listens atomic.Int32
	again, watching := make(chan struct{}), make(chan struct{})
	b := replicaOn(t, dsn, Options{listenQuiet: 200 * time.Millisecond,
		listening: func(ctx context.Context, c *pgx.Conn) error {
			switch listens.Add(1) {
			case 1: // as the old primary would: read-only, and nobody's changes there
				select { // the reconnect's news must find the watch below
				case <-watching:
				case <-ctx.Done():
					return ctx.Err()
				}
				_, err := c.Exec(ctx, `SET default_transaction_read_only = on; UNLISTEN *`)
				return err
			case 2:
				close(again)
			}
			return nil
		}})
	a := replicaOn(t, dsn, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	ch, err := b.Watch(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	close(watching)
	select {
	case <-again:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener stayed on a connection that takes no writes for 10 s (quiet spell 200 ms)")
	}
	// The new connection's own news (read again) is not the change below.
	storetest.AwaitChange(t, ch, coordination.Change{Steps: true, Session: true, Events: true})
	time.Sleep(100 * time.Millisecond)
	for len(ch) > 0 {
		<-ch
	}
	if err := a.AppendEvent(ctx, "s", coordination.Event{Type: "x", Message: "after the failover"}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Events: true})
}

// TestAQuietListenerOnAServerThatTakesWritesStays: the quiet spell's
// question costs a healthy listener nothing but a round trip: it keeps
// its connection.
func TestAQuietListenerOnAServerThatTakesWritesStays(t *testing.T) {
	var listens atomic.Int32
	replicaOn(t, pgtest.Schema(t), Options{listenQuiet: 50 * time.Millisecond,
		listening: func(context.Context, *pgx.Conn) error { listens.Add(1); return nil }})
	time.Sleep(time.Second)
	if n := listens.Load(); n != 1 {
		t.Errorf("the listener listened %d times in a quiet second on a server that takes writes, want once", n)
	}
}

// TestAHealthCheckOnAConnectionLeftReadOnlySaysSo: a ping on a connection
// left on a server that takes no writes fails, naming why, and drops the
// connection, so the next check (on a new connection, checked read-write as
// it is made) answers. A plain ping answered it, and a load balancer kept
// sending clients to a replica whose every write failed.
func TestAHealthCheckOnAConnectionLeftReadOnlySaysSo(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	requireWritable(dsn, cfg)
	cfg.MaxConns = 1 // every ping on the one connection made read-only below
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := migrate(ctx, pool); err != nil { // a ping reads the schema's version too
		t.Fatal(err)
	}
	s := &Store{db: newDB(pool, "unused", Options{}), tenant: coordination.DefaultTenant}
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `SET default_transaction_read_only = on`); err != nil { // as a demoted server's
		t.Fatal(err)
	}
	pid := c.Conn().PgConn().PID()
	c.Release()
	if err := s.Ping(ctx); err == nil || !strings.Contains(err.Error(), "takes no writes") {
		t.Fatalf("a ping on a read-only connection = %v, want it to say the database takes no writes", err)
	}
	s.db.pings.at = time.Time{} // the last answer no longer stands
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("the next health check: %v; want it answered on a new connection", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var open bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the read-only connection the ping found stayed open")
		}
	}
}

// TestAListenerNeverListensOnAPooledConnectionThatTakesNoWrites: after a
// lost LISTEN connection the listener takes one from the pool, whose idle
// connections were checked read-write only as they were made; after a
// failover behind a proxy they may be on the old primary. Every idle one
// is made read-only here, and the listener must not listen on any.
func TestAListenerNeverListensOnAPooledConnectionThatTakesNoWrites(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	var listens, onReadOnly, pid atomic.Int32
	b := replicaOn(t, dsn, Options{listening: func(ctx context.Context, c *pgx.Conn) error {
		listens.Add(1)
		pid.Store(int32(c.PgConn().PID()))
		var ro string
		if err := c.QueryRow(ctx, `SHOW transaction_read_only`).Scan(&ro); err != nil {
			return err
		}
		if ro == "on" {
			onReadOnly.Add(1)
		}
		return nil
	}})
	// Idle connections enough for the listener to be handed one.
	var held []*pgxpool.Conn
	for range 4 {
		c, err := b.db.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		if _, err := c.Exec(ctx, `SET default_transaction_read_only = on`); err != nil { // as the old primary's
			t.Fatal(err)
		}
		c.Release()
	}
	if _, err := b.db.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid.Load()); err != nil {
		t.Fatalf("cutting the listener: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); listens.Load() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not listen again within 10 s")
		}
	}
	if n := onReadOnly.Load(); n != 0 {
		t.Errorf("the listener listened %d times on a connection that takes no writes", n)
	}
}
