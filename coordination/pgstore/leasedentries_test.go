package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
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
