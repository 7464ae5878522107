package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	// A loan says which session it is of (Born, the row's creation time),
	// whether it was lent or read whole.
	sess, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want := sess.CreatedAt.Truncate(time.Microsecond); !lent.Born.Equal(want) {
		t.Errorf("the lent ledger is of a session born %v; want %v", lent.Born, want)
	}
	unborn, wholeUnborn := *lent, *whole
	unborn.Born, wholeUnborn.Born = time.Time{}, time.Time{}
	if !reflect.DeepEqual(&unborn, &wholeUnborn) {
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
	fresh := &Store{db: newDB(a.db.pool, a.db.channel, Options{}), tenant: a.tenant}
	sameLedger(t, a, "s", lend(t, fresh, "s"))
}

// TestALoanAsksOnlyForWhatIsNew: a loan is one round trip, and a session
// whose row was made again under the same id is read afresh, not continued
// from what was kept of the old one.
func TestALoanAsksOnlyForWhatIsNew(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &RoundTrips{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		landStep(t, a, "s", "agent_a", "an answer")
	}
	lend(t, a, "s")
	before := c.Count()
	lend(t, a, "s")
	if n := c.Count() - before; n != 1 {
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

// isKept tells whether the session's ledger is kept.
func isKept(ls *loans, tenant, id string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	_, ok := ls.items[loanKey(tenant, id)]
	return ok
}

// keptLoan is a loan as if just read, weighing bytes.
func keptLoan(ls *loans, id string, bytes int64) *loan {
	ln := newLoan()
	ln.bytes = bytes
	ls.keep("t", id, ln)
	return ln
}

// TestKeptLedgersAreBounded: a replica serving for weeks keeps at most
// loansMax sessions' ledgers, letting the least recently read go.
func TestKeptLedgersAreBounded(t *testing.T) {
	var ls loans
	first := keptLoan(&ls, "s0", 1)
	for i := range loansMax + 10 {
		keptLoan(&ls, fmt.Sprint("s", i+1), 1)
		ls.keep("t", "s0", first) // read at every turn: kept
	}
	if n := ls.len(); n != loansMax {
		t.Errorf("%d ledgers kept, want at most %d", n, loansMax)
	}
	if ls.get("t", "s0") != first {
		t.Error("the most recently read session's ledger was let go")
	}
	if isKept(&ls, "t", "s1") {
		t.Error("the least recently read session's ledger is still kept")
	}
}

// TestKeptLedgersAreBoundedInBytes: what the kept ledgers weigh stays
// within the bound, the least recently read let go first, and a ledger
// heavier than the bound alone is not kept at all.
func TestKeptLedgersAreBoundedInBytes(t *testing.T) {
	ls := loans{maxBytes: 1000}
	a := keptLoan(&ls, "a", 400)
	b := keptLoan(&ls, "b", 400)
	ls.keep("t", "a", a) // a read again: b is now the least recently read
	c := keptLoan(&ls, "c", 400)
	if ls.get("t", "a") != a || ls.get("t", "c") != c || ls.get("t", "b") == b {
		t.Errorf("kept a, b, c of 400 bytes each within 1,000, b least recently read: want a and c kept, b let go")
	}
	if ls.bytes > 1000 || ls.bytes != 800 {
		t.Errorf("the kept ledgers weigh %d bytes, want 800 (a and c)", ls.bytes)
	}
	a.bytes = 700 // a grew at its next read: c, read before it, goes
	ls.keep("t", "a", a)
	if ls.get("t", "c") == c || ls.bytes != 700 {
		t.Errorf("after a grew to 700 bytes: %d bytes kept, c kept %v; want c let go and 700", ls.bytes, ls.get("t", "c") == c)
	}
	keptLoan(&ls, "huge", 2000)
	if ls.len() != 0 || ls.bytes != 0 {
		t.Errorf("after a 2,000-byte ledger: %d kept weighing %d; want none, the huge one included", ls.len(), ls.bytes)
	}
}

// TestOnlyLiveSessionsTakeAPlace: reading a session not found, a finished
// one or a cancelled one keeps nothing and lets no live session's ledger
// go, even with room for only one.
func TestOnlyLiveSessionsTakeAPlace(t *testing.T) {
	a, _ := sessionOnTwoReplicas(t, "s")
	a.db.loans.maxCount = 1
	ctx := context.Background()
	for id, kind := range map[string]coordination.SessionEntryKind{"f": coordination.SessionFinished, "c": coordination.SessionCancelled} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AppendSession(ctx, id, coordination.SessionEntry{Kind: kind}); err != nil {
			t.Fatal(err)
		}
	}
	landStep(t, a, "s", "agent_a", "an answer")
	lend(t, a, "s")
	live := a.db.loans.get(a.tenant, "s")
	if a.db.loans.bytes < int64(len("an answer")) || a.db.loans.bytes != live.bytes {
		t.Errorf("the kept ledgers weigh %d bytes, the live one %d; want the live one's rows, at least its answer", a.db.loans.bytes, live.bytes)
	}
	if _, err := a.LendLedger(ctx, "missing"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("lending a missing session: %v, want ErrSessionNotFound", err)
	}
	sameLedger(t, a, "f", lend(t, a, "f"))
	sameLedger(t, a, "c", lend(t, a, "c"))
	if a.db.loans.get(a.tenant, "s") != live || a.db.loans.len() != 1 {
		t.Errorf("after reading a missing, a finished and a cancelled session, %d ledgers kept, the live one's kept %v; want only the live one",
			a.db.loans.len(), a.db.loans.get(a.tenant, "s") == live)
	}
	if _, err := a.AppendSession(ctx, "c", coordination.SessionEntry{Kind: coordination.SessionResumed}); err != nil {
		t.Fatal(err)
	}
	lend(t, a, "c")
	if !isKept(&a.db.loans, a.tenant, "c") {
		t.Error("a resumed session's ledger is not kept; want it kept, live again")
	}
}

// TestAWaitForALoanEndsWithItsContext: a call waiting while another reads
// the session's ledger (hung on the database) gives up at its own
// deadline, and what is kept stays for the next call.
func TestAWaitForALoanEndsWithItsContext(t *testing.T) {
	a, _ := sessionOnTwoReplicas(t, "s")
	kept := lend(t, a, "s")
	ln := a.db.loans.get(a.tenant, "s")
	ln.lock <- struct{}{} // a read in flight that does not come back
	released := make(chan struct{})
	go func() {
		time.Sleep(3 * time.Second)
		<-ln.lock
		close(released)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := a.LendLedger(ctx, "s")
	if took := time.Since(began); !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Errorf("a loan with a 100 ms deadline behind a hung read returned %v after %v; want the deadline exceeded within it", err, took)
	}
	<-released
	if again := lend(t, a, "s"); again != kept {
		t.Error("after a call gave up waiting, the next loan is another ledger; want the kept one, nothing new")
	}
}

// TestAGapIsReadWhole: rows that do not continue what is kept (an agent's
// first row past none kept that is not step 1) drop the kept ledger, and
// the session is lent as a whole read gives it, not kept past the gap.
func TestAGapIsReadWhole(t *testing.T) {
	a, _ := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	lend(t, a, "s") // agent_a has no entry kept
	insert := func(step int) {
		t.Helper()
		e := coordination.Entry{Agent: "agent_a", Step: step, Kind: coordination.KindAnswer, Content: fmt.Sprint("step ", step), Label: "agent_a.1"}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.db.pool.Exec(ctx, `INSERT INTO entries (tenant, session_id, agent_id, step, kind, at, entry) VALUES ($1, 's', 'agent_a', $2, $3, now(), $4)`,
			a.tenant, step, string(e.Kind), data); err != nil {
			t.Fatal(err)
		}
	}
	insert(2) // step 2 seen before step 1: the rows do not continue
	sameLedger(t, a, "s", lend(t, a, "s"))
	if n := a.db.loans.len(); n != 0 {
		t.Errorf("%d ledgers kept after a read found a gap, want none", n)
	}
	insert(1)
	l := lend(t, a, "s")
	if n := len(l.Agents["agent_a"]); n != 2 {
		t.Errorf("agent_a's entries lent once step 1 landed: %d, want 2", n)
	}
	sameLedger(t, a, "s", l)
}

// TestAGapReadLendsTheHolds: a read that finds a gap (and so is lent whole,
// nothing kept) still gives the calls' holds on the session's budget: a
// run's launch from it counts another replica's hold. Before, such a read
// lent none, and the launch counted this replica's holds alone.
func TestAGapReadLendsTheHolds(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	if _, err := b.HoldSpend(ctx, "s", "hold:on-b", 0.30, 1000, time.Minute); err != nil {
		t.Fatal(err)
	}
	lend(t, a, "s")
	e := coordination.Entry{Agent: "agent_a", Step: 2, Kind: coordination.KindAnswer, Content: "step 2", Label: "agent_a.1"}
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `INSERT INTO entries (tenant, session_id, agent_id, step, kind, at, entry) VALUES ($1, 's', 'agent_a', 2, $2, now(), $3)`,
		a.tenant, string(e.Kind), data); err != nil {
		t.Fatal(err)
	}
	_, _, holds, err := a.LendState(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(holds) != 1 || holds[0].Key != "hold:on-b" || holds[0].Cost != 0.30 {
		t.Errorf("a read that found a gap lent the holds %v; want B's $0.30 under hold:on-b", holds)
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
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	lend(t, a, "s")
	landStep(t, a, "s", "agent_a", "landed before the calls")
	ln := a.db.loans.get(a.tenant, "s")
	ln.lock <- struct{}{} // as if a read were in flight: the calls below wait
	loans := make(chan *coordination.Ledger, 4)
	var began atomic.Int32
	for range 4 {
		go func() {
			began.Add(1)
			l, err := a.LendLedger(ctx, "s")
			if err != nil {
				t.Error(err)
			}
			loans <- l
		}()
	}
	// All four have begun (waited for, bounded: on a loaded machine a
	// goroutine could start past a fixed 200 ms, after the read was sent,
	// and read again), then a moment more for each to reach its wait. A
	// call that did not wait with the others reads again, and the count
	// below says so.
	await(t, "the four calls begun", func() bool { return began.Load() == 4 })
	time.Sleep(200 * time.Millisecond)
	before := c.Count()
	<-ln.lock
	for range 4 {
		l := <-loans
		if l == nil {
			t.FailNow()
		}
		if es := l.Agents["agent_a"]; len(es) != 1 {
			t.Fatalf("a loan asked for after the step landed has %d of agent_a's entries, want 1", len(es))
		}
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("four loans waiting together took %d round trips, want 1", n)
	}
}

// cancelOnBatch ends a context as the next batch is sent, as a caller's
// deadline reached while its read is on the wire.
type cancelOnBatch struct {
	RoundTrips
	cancel atomic.Pointer[context.CancelFunc]
}

func (c *cancelOnBatch) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if f := c.cancel.Swap(nil); f != nil {
		(*f)()
	}
	return c.RoundTrips.TraceBatchStart(ctx, conn, d)
}

// TestAReadCutShortKeepsTheLoan: a loan whose read ends with its caller's
// context leaves what is kept as it was: the next call continues it (the
// same ledger, nothing being new) rather than reading it all again.
func TestAReadCutShortKeepsTheLoan(t *testing.T) {
	c := &cancelOnBatch{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "an answer")
	kept := lend(t, a, "s")
	// The read runs on a goroutine of its own, so a read that finishes as
	// the context ends may still answer its caller (an answer is as good):
	// tried until one is cut short, each time checking the kept ledger.
	cut := false
	for range 20 {
		cctx, cancel := context.WithCancel(ctx)
		c.cancel.Store(&cancel)
		_, err := a.LendLedger(cctx, "s")
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("a loan whose context ended on the wire: %v, want context.Canceled or its answer", err)
		}
		cut = cut || err != nil
		if again := lend(t, a, "s"); again != kept {
			t.Fatal("after a read cut short, the next loan is another ledger; want the kept one continued, nothing being new")
		}
		if cut {
			return
		}
	}
	t.Fatal("no loan in twenty was cut short by its context ending on the wire: the test tested nothing")
}
