package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// gathered waits until n renewals are gathered on a replica whose renewals
// are sent by hand (renewals.manual), then sends them as one batch.
func gathered(t *testing.T, st *Store, n int) {
	t.Helper()
	rs := &st.db.renewals
	deadline := time.Now().Add(30 * time.Second)
	for {
		rs.mu.Lock()
		got := len(rs.pending)
		rs.mu.Unlock()
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d renewals gathered after 30 s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
	st.db.renewAll()
}

// TestALockedLeaseRowDelaysOnlyItsOwnRenewal: a lease row another
// transaction holds (a claimer stalled between its read and its COMMIT)
// makes its own renewal wait, not the others gathered with it: s1 renews
// within its 2 s deadline while s2's row is held, and s2's renewal is
// late alone.
func TestALockedLeaseRowDelaysOnlyItsOwnRenewal(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	a.db.renewals.manual = true
	ctx := context.Background()
	versions := map[string]int64{}
	for _, id := range []string{"s1", "s2"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		l, err := a.AcquireRun(ctx, id, coordination.ThisProcess("test"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		versions[id] = l.Version
	}
	stalled, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stalled.Rollback(ctx) }()
	if _, err := stalled.Exec(ctx, `SELECT 1 FROM leases WHERE tenant = $1 AND session_id = 's2' AND agent_id = '' FOR UPDATE`, a.tenant); err != nil {
		t.Fatal(err)
	}
	errs := map[string]chan error{"s1": make(chan error, 1), "s2": make(chan error, 1)}
	for id, ch := range errs {
		go func() {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := a.RenewRun(rctx, id, versions[id], time.Minute)
			ch <- err
		}()
	}
	gathered(t, a, 2)
	if err := <-errs["s1"]; err != nil {
		t.Errorf("renewing s1, whose row is free, beside s2's held row: %v; want it renewed", err)
	}
	if err := <-errs["s2"]; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("renewing s2, whose row another transaction holds past the deadline: %v; want the deadline exceeded", err)
	}
	_ = stalled.Rollback(ctx)
	l, err := a.ReadRun(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(l.Expires) < 50*time.Second {
		t.Errorf("s1's lease after its renewal: %+v; want it expiring a minute from now", l)
	}
}

// TestRenewalsGatheredWhileTheHeartbeatsPoolIsBusyGoTogether: renewals of
// several windows that wait for a connection of the heartbeat's pool go in
// one transaction once one is free. A send that took its batch before it
// had a connection left each later window's renewals to queue behind it as
// a batch of their own.
func TestRenewalsGatheredWhileTheHeartbeatsPoolIsBusyGoTogether(t *testing.T) {
	counts := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), counts)
	ctx := context.Background()
	ids := []string{"s1", "s2", "s3"}
	versions := map[string]int64{}
	for _, id := range ids {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		l, err := a.AcquireRun(ctx, id, coordination.ThisProcess("test"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		versions[id] = l.Version
	}
	var held []*pgxpool.Conn
	for range a.db.beats.Config().MaxConns {
		c, err := a.db.beats.Acquire(ctx)
		if err != nil {
			t.Fatalf("taking the heartbeat pool's connections: %v", err)
		}
		held = append(held, c)
	}
	batches := func() (n int64) {
		counts.mu.Lock()
		defer counts.mu.Unlock()
		for k, v := range counts.by {
			if strings.Contains(k, renewalLeasesRead) {
				n += v
			}
		}
		return n
	}
	before := batches()
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			rctx, cancel := context.WithTimeout(ctx, 2*lockBeat)
			defer cancel()
			_, err := a.RenewRun(rctx, id, versions[id], time.Minute)
			errs <- err
		}()
		time.Sleep(2 * renewWindow) // each renewal in a window of its own
	}
	for _, c := range held {
		c.Release()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Fatalf("renewing once the heartbeat's pool was free: %v", err)
		}
	}
	if n := batches() - before; n != 1 {
		t.Errorf("the three renewals went in %d transactions, want 1", n)
	}
}

// TestRenewalsWhoseCallersGaveUpHoldNoConnection: a renewal whose row
// another transaction holds is renewed alone, on a connection of the main
// pool, for no longer than its caller waits. A heartbeat gives up after a
// beat and asks again at the next; before, each renewal it left behind
// went on waiting for the row on its own connection, for two beats, and
// under a slow database they piled up until the steps found no connection
// (a test renewing every millisecond hung its run for minutes).
func TestRenewalsWhoseCallersGaveUpHoldNoConnection(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	a.db.renewals.manual = true
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("test"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	stalled, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stalled.Rollback(ctx) }()
	if _, err := stalled.Exec(ctx, `SELECT 1 FROM leases WHERE tenant = $1 AND session_id = 's' AND agent_id = '' FOR UPDATE`, a.tenant); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		rctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		errc := make(chan error, 1)
		go func() { _, err := a.RenewRun(rctx, "s", l.Version, time.Minute); errc <- err }()
		time.Sleep(40 * time.Millisecond) // the caller has given up
		gathered(t, a, 1)
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a renewal of a held row past its caller's wait: %v; want the deadline exceeded", err)
		}
		cancel()
	}
	time.Sleep(50 * time.Millisecond)
	if n := a.db.pool.Stat().AcquiredConns(); n > 1 {
		t.Errorf("%d connections of the main pool held after the callers gave up (one is the stalled transaction's); want none waiting for the held row", n)
	}
}
