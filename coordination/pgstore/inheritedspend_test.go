package pgstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// deadSpendCase is a session on two replicas, a and b, with agent_a's step
// lock held on a as the other replica whose budget check is read.
type deadSpendCase struct {
	t     *testing.T
	a, b  *Store
	check *stepLock
}

func newDeadSpendCase(t *testing.T) *deadSpendCase {
	a, b := sessionOnTwoReplicas(t, "s")
	c := &deadSpendCase{t: t, a: a, b: b}
	c.check = c.take(a, "agent_a")
	return c
}

func (c *deadSpendCase) take(st *Store, agent string) *stepLock {
	c.t.Helper()
	l, err := st.LockStep(context.Background(), "s", agent)
	if err != nil {
		c.t.Fatal(err)
	}
	return l.(*stepLock)
}

// share has l share its spend so far.
func (c *deadSpendCase) share(l *stepLock, cost float64, tokens int64) {
	c.t.Helper()
	if _, _, err := l.ShareSpend(context.Background(), cost, tokens); err != nil {
		c.t.Fatal(err)
	}
}

// counts wants the other replica's budget check (agent_a's step, sharing
// nothing) to read the session's spend as cost and tokens.
func (c *deadSpendCase) counts(cost float64, tokens int64, when string) {
	c.t.Helper()
	got, gotTokens, err := c.check.ShareSpend(context.Background(), 0, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	if math.Abs(got-cost) > 1e-9 || gotTokens != tokens {
		c.t.Errorf("%s, the other replica's budget check counts $%.4f, %d tokens; want $%.4f, %d", when, got, gotTokens, cost, tokens)
	}
}

// dies has l's replica stop renewing it, its row expired.
func (c *deadSpendCase) dies(st *Store, l *stepLock) {
	c.t.Helper()
	st.db.held.remove(st.tenant, l.token)
	expireLock(c.t, st, "s", "step:"+l.agent)
}

// record appends the usage entry recording a spend under key, as
// coordination's recordTakenOver (or a late holder) does.
func (c *deadSpendCase) record(cost float64, tokens int64, key string) {
	c.t.Helper()
	if _, err := c.a.AppendSession(context.Background(), "s", coordination.SessionEntry{Kind: coordination.SessionUsage,
		Agents: []string{"agent_b"}, Usage: &providers.Usage{Input: tokens, CostUSD: &cost}, Spender: key}); err != nil {
		c.t.Fatal(err)
	}
}

// stepRows is how many step lock rows the session has.
func (c *deadSpendCase) stepRows() int {
	c.t.Helper()
	var n int
	if err := c.a.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM locks WHERE tenant = $1 AND session_id = 's' AND name LIKE 'step:%'`, c.a.tenant).Scan(&n); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// TestADeadStepsSpendIsCountedFromItsTakeUntilItsRecord: B dies with
// $0.30 shared on its step lock. The agent's next step takes the row over
// and inherits that spend: every replica's budget check goes on counting
// it between the take and the record, and once the record lands (its
// usage entry under B's key) counts it once, in the ledger. Before, the
// take reset the row, and until the record the dead spend counted
// nowhere.
func TestADeadStepsSpendIsCountedFromItsTakeUntilItsRecord(t *testing.T) {
	c := newDeadSpendCase(t)
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.30, 3000)
	c.dies(c.b, lb)
	c.counts(0.30, 3000, "with B dead and its row expired")
	lb2 := c.take(c.a, "agent_b")
	if dead := lb2.TakenOverSpend(); len(dead) != 1 || dead[0] != (coordination.InheritedSpend{Key: lb.token, CostUSD: 0.30, Tokens: 3000}) {
		t.Fatalf("the take found %+v; want $0.30, 3,000 tokens under B's token", dead)
	}
	c.counts(0.30, 3000, "between the take and its record")
	c.share(lb2, 0.10, 100)
	c.counts(0.40, 3100, "with the taking step sharing its own spend")
	c.record(0.30, 3000, lb.token)
	c.counts(0.40, 3100, "once the record landed")
	c.record(0.30, 3000, lb.token) // a second record of the key (it counts in the ledger, not on the row)
	c.counts(0.70, 6100, "after a second record under the key")
}

// TestADeadSpendOutlivesTheLockThatInheritedIt: the step that inherited
// a dead holder's spend lets its lock go before the record lands (it
// landed, or it was refused; the record waits for the store). The row
// stays, holderless and free to take, still counted; the agent's next step
// inherits the spend again; the record takes it off and the row goes.
func TestADeadSpendOutlivesTheLockThatInheritedIt(t *testing.T) {
	c := newDeadSpendCase(t)
	ctx := context.Background()
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.30, 3000)
	c.dies(c.b, lb)
	lb2 := c.take(c.a, "agent_b")
	c.share(lb2, 0.10, 100)
	cost := 0.10
	if _, err := lb2.AppendAndRelease(ctx, coordination.Entry{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "4",
		Usage: providers.Usage{Input: 90, Output: 10, CostUSD: &cost}}); err != nil {
		t.Fatal(err)
	}
	c.counts(0.40, 3100, "after the inheriting step landed, its record not yet")
	lb3 := c.take(c.a, "agent_b") // not busy: the row kept is nobody's
	if dead := lb3.TakenOverSpend(); len(dead) != 1 || dead[0].Key != lb.token || dead[0].CostUSD != 0.30 {
		t.Errorf("the agent's next step found %+v; want B's $0.30 again, under its key", dead)
	}
	lb3.Release()
	c.counts(0.40, 3100, "after a refused step let the lock go")
	if n := c.stepRows(); n != 2 {
		t.Errorf("%d step lock rows; want agent_a's and agent_b's kept with B's spend", n)
	}
	c.record(0.30, 3000, lb.token)
	c.counts(0.40, 3100, "once the record landed")
	if n := c.stepRows(); n != 1 {
		t.Errorf("%d step lock rows after the record; want agent_a's alone (the kept row goes with what it kept)", n)
	}
}

// TestARowTakenOverTwiceCarriesBothSpends: B dies with $0.30 shared; the
// step that inherits it dies too, with $0.20 of its own, before B's record
// lands. The third take inherits both, each under its own key, and each
// record takes off its own.
func TestARowTakenOverTwiceCarriesBothSpends(t *testing.T) {
	c := newDeadSpendCase(t)
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.30, 3000)
	c.dies(c.b, lb)
	lb2 := c.take(c.b, "agent_b")
	c.share(lb2, 0.20, 200)
	c.dies(c.b, lb2)
	c.counts(0.50, 3200, "with both dead")
	lb3 := c.take(c.a, "agent_b")
	want := map[string]coordination.InheritedSpend{lb.token: {Key: lb.token, CostUSD: 0.30, Tokens: 3000}, lb2.token: {Key: lb2.token, CostUSD: 0.20, Tokens: 200}}
	dead := lb3.TakenOverSpend()
	if len(dead) != 2 || dead[0] != want[dead[0].Key] || dead[1] != want[dead[1].Key] {
		t.Errorf("the third take found %+v; want B's $0.30 and the second step's $0.20, each under its key", dead)
	}
	c.counts(0.50, 3200, "after the third take")
	c.record(0.20, 200, lb2.token)
	c.counts(0.50, 3200, "after the second step's record")
	c.record(0.30, 3000, lb.token)
	c.counts(0.50, 3200, "after both records")
}

// TestARecordUnderAHeldRowsKeyTakesItsSpendOff: a holder cut off from the
// store records its own step's spend under its key while its row is still
// there: counted once, and a take of the row after that finds nothing to
// record (it would be recorded twice, the second record adding nothing
// and so never taking it off the row).
func TestARecordUnderAHeldRowsKeyTakesItsSpendOff(t *testing.T) {
	c := newDeadSpendCase(t)
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.30, 3000)
	c.dies(c.b, lb)
	c.record(0.35, 3500, lb.token)
	c.counts(0.35, 3500, "after the holder recorded its own spend")
	if dead := c.take(c.a, "agent_b").TakenOverSpend(); len(dead) != 0 {
		t.Errorf("a take after the holder's record found %+v; want nothing", dead)
	}
}

// TestATakeCountsAShareCommittedWhileItWaited: the holder of an expired
// step lock is slow, not dead: its share commits while a take waits on its
// row. The take inherits the row as committed, the share's $0.50 in full,
// not the $0.37 its statement's snapshot showed.
func TestATakeCountsAShareCommittedWhileItWaited(t *testing.T) {
	c := newDeadSpendCase(t)
	ctx := context.Background()
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.37, 5000)
	c.dies(c.b, lb)
	sharing, err := c.b.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sharing.Rollback(ctx)
	var pid int
	if err := sharing.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := sharing.Exec(ctx, `UPDATE locks SET spent_cost = 0.5, spent_tokens = 6000 WHERE tenant = $1 AND token = $2`, c.b.tenant, lb.token); err != nil {
		t.Fatal(err)
	}
	took := make(chan *stepLock, 1)
	go func() {
		l, err := c.a.LockStep(ctx, "s", "agent_b")
		if err != nil {
			t.Error(err)
			took <- nil
			return
		}
		took <- l.(*stepLock)
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var blocked int
		if err := c.a.db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the take never waited on the row being shared")
		}
	}
	if err := sharing.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	lb2 := <-took
	if lb2 == nil {
		return
	}
	if dead := lb2.TakenOverSpend(); len(dead) != 1 || dead[0] != (coordination.InheritedSpend{Key: lb.token, CostUSD: 0.5, Tokens: 6000}) {
		t.Errorf("the take found %+v; want the share committed while it waited, $0.50 and 6,000 tokens under the holder's key", dead)
	}
	c.counts(0.5, 6000, "after the take")
}

// TestALockLetGoInAnOutageKeepsItsInheritedSpend: the step that inherited
// a dead holder's spend let its lock go while the database was
// unreachable; the heartbeat lets the row go once it answers, and keeps it
// (holderless, still counted) as an unlock does.
func TestALockLetGoInAnOutageKeepsItsInheritedSpend(t *testing.T) {
	c := newDeadSpendCase(t)
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.30, 3000)
	c.dies(c.b, lb)
	lb2 := c.take(c.a, "agent_b")
	c.a.db.held.remove(c.a.tenant, lb2.token)
	c.a.db.held.letGo(c.a.tenant, lb2.token)
	c.a.db.deleteGone(context.Background())
	c.counts(0.30, 3000, "after the heartbeat let the lock go")
	if dead := c.take(c.b, "agent_b").TakenOverSpend(); len(dead) != 1 || dead[0].Key != lb.token {
		t.Errorf("the agent's next step found %+v; want B's spend again, under its key", dead)
	}
}
