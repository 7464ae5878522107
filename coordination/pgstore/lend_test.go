package pgstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

func lend(t *testing.T, st *Store, id string) *coordination.Ledger {
	t.Helper()
	l, err := st.LendLedger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func landStep(t *testing.T, st *Store, id, agent, content string) {
	t.Helper()
	ctx := context.Background()
	l, err := st.LockStep(ctx, id, agent)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: content, Label: agent + ".1"}); err != nil {
		t.Fatal(err)
	}
}

// sameLedger fails unless lent is what a whole read of the database gives.
func sameLedger(t *testing.T, st *Store, id string, lent *coordination.Ledger) {
	t.Helper()
	whole, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lent, whole) {
		t.Fatalf("the lent ledger\n%+v\ndiffers from a whole read\n%+v", lent, whole)
	}
}

// TestALentLedgerSeesAnotherReplicasWrites: a replica keeping a session's
// ledger sees the steps and session entries another replica lands at its
// next loan, earlier loans unchanged; a step it lost to a takeover is
// refused and the taker's entry is what it reads; and a replica that never
// read the session (a new owner after a takeover) reads all of it.
func TestALentLedgerSeesAnotherReplicasWrites(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	first := lend(t, a, "s")
	landStep(t, b, "s", "agent_a", "b's first")
	if _, err := b.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionRevote, Agents: []string{"agent_a"}}); err != nil {
		t.Fatal(err)
	}
	second := lend(t, a, "s")
	if len(second.Agents["agent_a"]) != 1 || len(second.Session) != 1 {
		t.Fatalf("a's loan after b's writes: %+v; want b's step and session entry", second)
	}
	if len(first.Agents["agent_a"]) != 0 || len(first.Session) != 0 {
		t.Fatalf("the loan before b's writes changed: %+v", first)
	}
	sameLedger(t, a, "s", second)
	if again := lend(t, a, "s"); again != second {
		t.Error("a loan with nothing new is another ledger; want the same one, so the service's derivation memo holds")
	}

	// a's step under a lock that expired and b took over is refused, and
	// a's next loan carries b's entry, not a's.
	la, err := a.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	a.db.held.remove(a.tenant, la.(*stepLock).token)
	expireLock(t, a, "s", "step:agent_b")
	landStep(t, b, "s", "agent_b", "b's, after the takeover")
	if _, err := la.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "a's, late", Label: "agent_b.1"}); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("a's Append under a lost lock = %v, want ErrLeaseLost", err)
	}
	la.Release()
	third := lend(t, a, "s")
	if es := third.Agents["agent_b"]; len(es) != 1 || es[0].Content != "b's, after the takeover" {
		t.Fatalf("agent_b's entries as a lends them: %+v; want only b's", es)
	}
	sameLedger(t, a, "s", third)

	// A replica that kept nothing of the session (its pool is a's, its
	// loans its own), as one taking the run over.
	fresh := &Store{db: &DB{pool: a.db.pool}, tenant: a.tenant}
	sameLedger(t, a, "s", lend(t, fresh, "s"))
}

// TestALoanAsksOnlyForWhatIsNew: a loan is one round trip, and a session
// whose row was made again under the same id is read afresh, not continued
// from what was kept of the old one.
func TestALoanAsksOnlyForWhatIsNew(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &trips{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		landStep(t, a, "s", "agent_a", "an answer")
	}
	lend(t, a, "s")
	before := c.n.Load()
	lend(t, a, "s")
	if n := c.n.Load() - before; n != 1 {
		t.Errorf("a loan took %d round trips, want 1", n)
	}

	if _, err := a.db.pool.Exec(ctx, `DELETE FROM sessions WHERE tenant = $1 AND id = 's'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	again := storetest.NewSession("s")
	again.CreatedAt = again.CreatedAt.Add(1e9)
	if err := a.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "the new session's")
	l := lend(t, a, "s")
	if es := l.Agents["agent_a"]; len(es) != 1 || es[0].Content != "the new session's" {
		t.Fatalf("the remade session's entries as lent: %+v; want only its own step", es)
	}
	sameLedger(t, a, "s", l)
}

// TestKeptLedgersAreBounded: a replica serving for weeks keeps at most
// loansMax sessions' ledgers, letting the least recently read go.
func TestKeptLedgersAreBounded(t *testing.T) {
	var ls loans
	first := ls.get("t", "s0")
	for i := range loansMax + 10 {
		ls.get("t", fmt.Sprint("s", i))
		ls.get("t", "s0") // read at every turn: kept
	}
	if n := ls.len(); n != loansMax {
		t.Errorf("%d ledgers kept, want at most %d", n, loansMax)
	}
	if ls.get("t", "s0") != first {
		t.Error("the most recently read session's ledger was let go")
	}
	if ls.get("t", "s1") == nil || ls.len() != loansMax {
		t.Error("reading a session let go again does not keep the bound")
	}
}

// TestAFinishedSessionKeepsNoLedger: the kept ledgers are the live
// sessions'; a finished one is lent whole and not kept.
func TestAFinishedSessionKeepsNoLedger(t *testing.T) {
	a, _ := sessionOnTwoReplicas(t, "s")
	landStep(t, a, "s", "agent_a", "an answer")
	lend(t, a, "s")
	if n := a.db.loans.len(); n != 1 {
		t.Fatalf("%d ledgers kept for one running session, want 1", n)
	}
	if _, err := a.AppendSession(context.Background(), "s", coordination.SessionEntry{Kind: coordination.SessionFinished}); err != nil {
		t.Fatal(err)
	}
	l := lend(t, a, "s")
	if len(l.Session) != 1 || l.Session[0].Kind != coordination.SessionFinished {
		t.Fatalf("the finished session's loan %+v lacks its finished entry", l)
	}
	if n := a.db.loans.len(); n != 0 {
		t.Errorf("%d ledgers kept after the session finished, want none", n)
	}
	sameLedger(t, a, "s", lend(t, a, "s"))
}

// TestLoansWaitingTogetherShareOneRead: calls that wait while the session's
// ledger is being read share the next read, sent after they all began: one
// round trip for all, with every write committed before they began. (A
// call made after a read was sent reads again: the sequential loans of
// TestALentLedgerSeesAnotherReplicasWrites.)
func TestLoansWaitingTogetherShareOneRead(t *testing.T) {
	c := &trips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	lend(t, a, "s")
	landStep(t, a, "s", "agent_a", "landed before the calls")
	ln := a.db.loans.get(a.tenant, "s")
	ln.mu.Lock() // as if a read were in flight: the calls below wait
	loans := make(chan *coordination.Ledger, 4)
	for range 4 {
		go func() {
			l, err := a.LendLedger(ctx, "s")
			if err != nil {
				t.Error(err)
			}
			loans <- l
		}()
	}
	time.Sleep(200 * time.Millisecond) // all four have begun and wait
	before := c.n.Load()
	ln.mu.Unlock()
	for range 4 {
		l := <-loans
		if l == nil {
			t.FailNow()
		}
		if es := l.Agents["agent_a"]; len(es) != 1 {
			t.Fatalf("a loan asked for after the step landed has %d of agent_a's entries, want 1", len(es))
		}
	}
	if n := c.n.Load() - before; n != 1 {
		t.Errorf("four loans waiting together took %d round trips, want 1", n)
	}
}
