package pgstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAStepsSpendInFlightIsCountedOnEveryReplica: two replicas each hold
// a step lock of one session; what each step reports is in the sum the
// other reads, with the landed usage. A step that lands moves its spend
// from its lock's row to the usage rows in one transaction, so the sum
// neither drops nor doubles; a dead replica's step counts, inherited by
// the step that takes its row over, until its record lands.
func TestAStepsSpendInFlightIsCountedOnEveryReplica(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	const id = "s"
	if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	cost := 0.25
	if _, err := a.AppendSession(ctx, id, coordination.SessionEntry{Kind: coordination.SessionUsage, Usage: &providers.Usage{Input: 100, Output: 10, CostUSD: &cost}}); err != nil {
		t.Fatal(err)
	}
	take := func(st *Store, agent string) *stepLock {
		t.Helper()
		l, err := st.LockStep(ctx, id, agent)
		if err != nil {
			t.Fatal(err)
		}
		return l.(*stepLock)
	}
	share := func(l *stepLock, c float64, tok int64, wantCost float64, wantTokens int64) {
		t.Helper()
		gotCost, gotTokens, err := l.ShareSpend(ctx, c, tok)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(gotCost-wantCost) > 1e-9 || gotTokens != wantTokens {
			t.Fatalf("%s shares $%.2f, %d tokens: the session has $%.4f, %d tokens; want $%.4f, %d", l.agent, c, tok, gotCost, gotTokens, wantCost, wantTokens)
		}
	}
	la, lb := take(a, "agent_a"), take(b, "agent_b")
	share(la, 0.5, 1000, 0.75, 1110)   // the usage entry and A's step
	share(lb, 0.125, 200, 0.875, 1310) // B's step beside A's
	share(la, 0.625, 1500, 1.0, 1810)  // A's step again: its row rewritten, not added to
	// A's step lands with its whole spend: the row goes, the usage comes.
	c := 0.75
	if _, err := la.AppendAndRelease(ctx, coordination.Entry{Agent: "agent_a", Kind: coordination.KindAnswer, Content: "4",
		Usage: providers.Usage{Input: 1500, Output: 300, CostUSD: &c}}); err != nil {
		t.Fatal(err)
	}
	share(lb, 0.125, 200, 1.125, 2110)
	// B dies with its step in flight: its row expires unrenewed and still
	// counts, for A's next step, until agent_b's next step takes it over.
	b.db.held.remove(b.tenant, lb.token)
	if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET expires_at = now() - interval '1 second' WHERE tenant = $1 AND token = $2`, a.tenant, lb.token); err != nil {
		t.Fatal(err)
	}
	la2 := take(a, "agent_a")
	if dead := la2.TakenOverSpend(); len(dead) != 0 {
		t.Errorf("a step lock let go by its landing was taken with %+v; want none", dead)
	}
	share(la2, 0, 0, 1.125, 2110)
	lb2 := take(a, "agent_b")
	// The take found B's spend and hands it over to be recorded (the
	// service records it in the ledger, coordination.recordTakenOver).
	if dead := lb2.TakenOverSpend(); len(dead) != 1 || dead[0] != (coordination.InheritedSpend{Key: lb.token, CostUSD: 0.125, Tokens: 200}) {
		t.Errorf("agent_b's step lock taken over from dead B: %+v; want $0.125, 200 tokens under B's token %q", dead, lb.token)
	}
	if lb2.SpendKey() != lb2.token || lb2.SpendKey() == lb.token {
		t.Errorf("the new take's spend key %q; want its own token", lb2.SpendKey())
	}
	// Inherited by the new step, B's spend counts until its record lands.
	share(la2, 0, 0, 1.125, 2110)
}

// TestATakeWaitingOnALandingReportsNoDeadSpend: the holder of an expired
// step lock is slow, not dead: its landing deletes its row (its spend now
// in the landed entry) while another replica's take waits on that row.
// The take inserts a fresh row and reports no spend to record, though its
// snapshot still shows the old row's: reported, it would count twice.
func TestATakeWaitingOnALandingReportsNoDeadSpend(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	la, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	held := la.(*stepLock)
	if _, _, err := held.ShareSpend(ctx, 0.37, 5000); err != nil {
		t.Fatal(err)
	}
	a.db.held.remove(a.tenant, held.token) // its heartbeat stalls
	expireLock(t, a, "s", "step:agent_a")
	landing, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := landing.Exec(ctx, `DELETE FROM locks WHERE tenant = $1 AND token = $2`, a.tenant, held.token); err != nil {
		t.Fatal(err)
	}
	took := make(chan *stepLock, 1)
	go func() {
		l, err := b.LockStep(ctx, "s", "agent_a")
		if err != nil {
			t.Error(err)
			took <- nil
			return
		}
		took <- l.(*stepLock)
	}()
	time.Sleep(200 * time.Millisecond) // the take waits on the row the landing deletes
	if err := landing.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	lb := <-took
	if lb == nil {
		return
	}
	if dead := lb.TakenOverSpend(); len(dead) != 0 {
		t.Errorf("a take that found the landed holder's row gone reports %+v to record; want none (the landing's entry has it)", dead)
	}
}
