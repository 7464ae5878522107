package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestALeasedEntryWaitsForAClaimInFlightAndIsRefusedByIt: a run's session
// entry and another replica's claim of the run meet in the database. The
// entry's transaction holds the run lease's row, so it waits for the
// claim's (here a transaction holding the row, as a claim does between
// its read and its write) and, the claim committed, is refused with
// nothing written: no claim lands between the fence's check and the
// write, however late the write arrives.
func TestALeasedEntryWaitsForAClaimInFlightAndIsRefusedByIt(t *testing.T) {
	a := replicas(t, 1)[0]
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	v1, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("replica-a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	claim, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = claim.Rollback(ctx) }() // a no-op once committed
	if _, err := claim.Exec(ctx, `SELECT 1 FROM leases WHERE tenant = $1 AND session_id = 's' AND agent_id = '' FOR UPDATE`, a.tenant); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := a.AppendSessionLeased(ctx, "s", v1.Version, coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "run cancelled"})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the entry was answered (%v) while a claim held the run lease's row; want it to wait for the claim", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := claim.Exec(ctx, `UPDATE leases SET version = version + 1, owner_id = 'replica-b', host = 'elsewhere', pid = 2,
		claimed_at = now(), renewed_at = now(), expires_at = now() + interval '1 hour', released = false
		WHERE tenant = $1 AND session_id = 's' AND agent_id = ''`, a.tenant); err != nil {
		t.Fatal(err)
	}
	if err := claim.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the entry still waits 10 s after the claim committed")
	}
	if !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("the entry after another replica's claim = %v; want ErrLeaseLost", err)
	}
	l, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Session) != 0 {
		t.Errorf("session entries = %+v; want none: the refused entry wrote nothing", l.Session)
	}
	// Nor did it use up a number: the next entry is the first.
	e, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionResumed, Reason: "next"})
	if err != nil || e.Seq != 1 {
		t.Errorf("the next entry = seq %d, %v; want seq 1", e.Seq, err)
	}
}

// TestASessionEntryIsOneRoundTrip: a session entry, fenced or not, with
// its usage, is one pipelined transaction: numbered, fenced, written and
// notified in one round trip (it was five to seven), and read back with
// its number.
func TestASessionEntryIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	claim, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("replica-a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cost := 0.25
	for i, write := range []func() (coordination.SessionEntry, error){
		func() (coordination.SessionEntry, error) {
			return a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionUsage, Reason: "a call's spend",
				Usage: &providers.Usage{Input: 10, Output: 2, CostUSD: &cost}})
		},
		func() (coordination.SessionEntry, error) {
			return a.AppendSessionLeased(ctx, "s", claim.Version, coordination.SessionEntry{Kind: coordination.SessionRevote, Agents: []string{"agent_a"}})
		},
	} {
		before := c.Count()
		e, err := write()
		if err != nil || e.Seq != i+1 {
			t.Fatalf("entry %d = seq %d, %v; want seq %d", i+1, e.Seq, err, i+1)
		}
		if n := c.Count() - before; n != 1 {
			t.Errorf("entry %d took %d round trips; want 1", i+1, n)
		}
	}
	l, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Session) != 2 || l.Session[0].Seq != 1 || l.Session[1].Seq != 2 || l.Session[0].Usage == nil || *l.Session[0].Usage.CostUSD != cost {
		t.Fatalf("session entries read back %+v; want seq 1 (the usage, its cost kept) and seq 2", l.Session)
	}
	var step int
	var paid float64
	if err := a.db.pool.QueryRow(ctx, `SELECT step, cost_usd FROM usage WHERE tenant = $1 AND session_id = 's' AND agent_id = ''`, a.tenant).Scan(&step, &paid); err != nil || step != 1 || paid != cost {
		t.Errorf("the usage row = step %d, $%v, %v; want step 1 (the entry's number), $%v", step, paid, err, cost)
	}
	if _, err := a.AppendSession(ctx, "missing", coordination.SessionEntry{Kind: coordination.SessionRevote}); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("an entry of a missing session = %v; want ErrSessionNotFound", err)
	}
}
