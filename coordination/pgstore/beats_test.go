package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// holdEveryConnection takes every connection of the store's pool, as a
// replica whose steps are all writing at once does, until the test ends.
func holdEveryConnection(t *testing.T, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var held []*pgxpool.Conn
	for range s.db.pool.Config().MaxConns {
		c, err := s.db.pool.Acquire(ctx)
		if err != nil {
			t.Fatalf("taking the pool's connections: %v", err)
		}
		held = append(held, c)
	}
	t.Cleanup(func() {
		for _, c := range held {
			c.Release()
		}
	})
}

// TestLocksAreRenewedWhileEveryConnectionIsBusy: the heartbeat renews a
// held lock's row while the steps hold every connection of the pool. It
// has connections of its own; sharing the pool, it waited a beat for one,
// gave up, and the row ran out under its live holder for another replica
// to take.
func TestLocksAreRenewedWhileEveryConnectionIsBusy(t *testing.T) {
	dsn := pgtest.Schema(t)
	s := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := s.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock) // after the connections are given back: cleanups run last first
	look, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close(ctx)
	expiry := func() time.Time {
		var at time.Time
		if err := look.QueryRow(ctx, `SELECT expires_at FROM locks WHERE tenant = $1 AND session_id = 's'`, s.tenant).Scan(&at); err != nil {
			t.Fatalf("reading the lock's row: %v", err)
		}
		return at
	}
	holdEveryConnection(t, s)
	before := expiry()
	// Two beats and a beat's timeout: a heartbeat waiting on the pool fails
	// every one of them.
	deadline := time.Now().Add(3*lockBeat + time.Second)
	for !expiry().After(before) {
		if time.Now().After(deadline) {
			t.Fatalf("the lock's row was not renewed in %v while the pool was busy (expires %v)", 3*lockBeat+time.Second, before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLeasesAreRenewedWhileEveryConnectionIsBusy: a run lease's renewal
// (the gathered renewals' transaction) goes through while the steps hold
// every connection of the pool, where it waited for one until its caller
// gave up and the lease ran out under a live run.
func TestLeasesAreRenewedWhileEveryConnectionIsBusy(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := s.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := s.AcquireRun(ctx, "s", coordination.ThisProcess("test"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	holdEveryConnection(t, s)
	rctx, cancel := context.WithTimeout(ctx, 2*lockBeat)
	defer cancel()
	next, err := s.RenewRun(rctx, "s", l.Version, time.Minute)
	if err != nil {
		t.Fatalf("renewing the run lease while the pool was busy: %v", err)
	}
	if !next.Expires.After(l.Expires) {
		t.Errorf("the renewed lease expires at %v, no later than the claim's %v", next.Expires, l.Expires)
	}
}
