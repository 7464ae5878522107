package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestALeaseOfADeletedSessionFencesNothingInTheSessionCreatedAgain: a run
// on replica A holds its run lease and a step lease of session s; A is
// cut off past its leases, and through B the session is deleted and
// created again under the same id (a client may choose it). The new
// session's claims begin above every version the deleted one's leases
// reached, so A's claims, stale, neither renew nor release the new run's
// leases nor fence an entry into its log. Before, versions began at 1
// again and A's heartbeat kept the new run's lease, its entries landing
// in the new session.
func TestALeaseOfADeletedSessionFencesNothingInTheSessionCreatedAgain(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	oldRun, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("run-old"), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	oldStep, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("step-old"), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// A second claim of the step lease, so the floor is not the run's.
	if err := a.ReleaseStep(ctx, "s", "agent_a", oldStep.Version); err != nil {
		t.Fatal(err)
	}
	if oldStep, err = a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("step-old"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // A is cut off past its leases
	if err := b.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	newRun, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("run-new"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	newStep, err := b.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("step-new"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	otherStep, err := b.AcquireStep(ctx, "s", "agent_b", coordination.ThisProcess("step-new"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	floor := max(oldRun.Version, oldStep.Version)
	for name, l := range map[string]coordination.RunLease{"run": newRun, "agent_a's step": newStep, "agent_b's step": otherStep} {
		if l.Version <= floor || l.ChainFrom != l.Version || l.RanBefore != 0 {
			t.Errorf("the new session's %s lease: claim %d (run of claims from %d, %v before); want above the deleted session's %d, a run of its own, nothing carried", name, l.Version, l.ChainFrom, l.RanBefore, floor)
		}
	}

	if _, err := a.RenewRun(ctx, "s", oldRun.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the deleted session's run renewed its claim %d in the new session: %v; want ErrLeaseLost", oldRun.Version, err)
	}
	if _, err := a.RenewStep(ctx, "s", "agent_a", oldStep.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the deleted session's step renewed its claim %d in the new session: %v; want ErrLeaseLost", oldStep.Version, err)
	}
	if _, err := a.AppendSessionLeased(ctx, "s", oldRun.Version, coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "stale run"}); err == nil {
		t.Errorf("the deleted session's run wrote a fenced session entry into the new session")
	}
	if err := a.ReleaseRun(ctx, "s", oldRun.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the deleted session's run released claim %d in the new session: %v; want ErrLeaseLost", oldRun.Version, err)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", oldStep.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the deleted session's step released claim %d in the new session: %v; want ErrLeaseLost", oldStep.Version, err)
	}
	l, err := b.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Session) != 0 {
		t.Errorf("the new session's log = %+v; want nothing of the deleted session's run", l.Session)
	}
	cur, err := b.ReadRun(ctx, "s")
	if err != nil || cur == nil || cur.ID != "run-new" || cur.Version != newRun.Version || cur.Released {
		t.Errorf("the new run's lease = %+v (%v); want run-new's claim %d, held", cur, err, newRun.Version)
	}
	if _, err := b.RenewStep(ctx, "s", "agent_a", newStep.Version, time.Minute); err != nil {
		t.Errorf("the new session's own step lease: %v", err)
	}

	// Deleted and created again once more: its claims begin above the
	// second life's, whatever the first's were.
	if err := b.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	third, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("run-third"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if top := max(newRun.Version, newStep.Version, otherStep.Version); third.Version <= top {
		t.Errorf("the third session's run lease: claim %d; want above the second's %d", third.Version, top)
	}
}

// TestALeaseFloorIsKeptThirtyDaysAfterItsSessionsDeletion: a prune's
// garbage collection lets a deleted session's lease floor go 30 days after
// the deletion, not before, and only its tenant's.
func TestALeaseFloorIsKeptThirtyDaysAfterItsSessionsDeletion(t *testing.T) {
	st := replicas(t, 1)[0]
	ctx := context.Background()
	for _, id := range []string{"old", "new"} {
		if err := st.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AcquireRun(ctx, id, coordination.ThisProcess("run"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	pool := st.db.pool
	if _, err := pool.Exec(ctx, `UPDATE lease_floors SET deleted_at = now() - interval '31 days' WHERE session_id = 'old'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO lease_floors VALUES ('acme', 'old', 7, now() - interval '31 days')`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CollectGarbage(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT tenant || '/' || session_id FROM lease_floors ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, k)
	}
	if rows.Err() != nil || len(kept) != 2 || kept[0] != "acme/old" || kept[1] != coordination.DefaultTenant+"/new" {
		t.Errorf("lease floors after the collection: %v (%v); want acme/old (another tenant's) and %s/new (deleted just now)", kept, rows.Err(), coordination.DefaultTenant)
	}
}
