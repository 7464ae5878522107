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

// crashCase is session "s" on a private server (pgtest.Private), which a
// test crashes: holder is the replica whose steps run before the crash,
// and after it, a replica opened on the restarted server (as deadSpendCase,
// the other replica being the fresh one).
type crashCase struct {
	deadSpendCase
	pg     *pgtest.Private
	holder *Store
}

func newCrashCase(t *testing.T) *crashCase {
	t.Helper()
	pg := pgtest.StartPrivate(t)
	holder := replicaOn(t, pg.DSN, Options{})
	if err := holder.Create(context.Background(), storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	return &crashCase{deadSpendCase: deadSpendCase{t: t}, pg: pg, holder: holder}
}

// crash stops the server as a crash does (pg_ctl stop -m immediate), which
// empties the unlogged locks table, starts it again and opens a fresh
// replica on it, with agent_a's step lock held there as the budget check
// read (deadSpendCase.counts; c.a is the fresh replica).
func (c *crashCase) crash() {
	c.t.Helper()
	// A share commits without waiting for the WAL flush (spendShare), which
	// the WAL writer makes within 600 ms: a crash in that window forgets
	// the last shares, the documented trade. The cases crash past it.
	if _, err := c.holder.db.pool.Exec(context.Background(), `CHECKPOINT`); err != nil {
		c.t.Fatal(err)
	}
	if err := c.pg.Crash(); err != nil {
		c.t.Fatal(err)
	}
	if err := c.pg.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.a, c.b = replicaOn(c.t, c.pg.DSN, Options{}), c.holder
	// Rows the holder still holds may be back already: its heartbeat puts
	// them back within a beat of the restart, which a slow Open of the
	// fresh replica can outlast.
	var live []string
	for tok := range c.holder.db.held.snapshot()[c.holder.tenant] {
		live = append(live, tok)
	}
	var n int
	if err := c.a.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM locks WHERE token <> ALL($1)`, live).Scan(&n); err != nil {
		c.t.Fatal(err)
	}
	if n != 0 {
		c.t.Fatalf("the crash left %d lock rows; want the unlocked table emptied, as a crash empties it", n)
	}
	c.check = c.take(c.a, "agent_a")
}

// excuseOver waits until the fresh replica's excuse of the restart has run
// out (restartseen.go): a TTL, and the clock allowance, after the database
// is taken to have begun answering.
func (c *crashCase) excuseOver() {
	_, back := c.a.db.outage.span()
	time.Sleep(time.Until(back.Add(lockTTL + coordination.MaxClockSkew + 100*time.Millisecond)))
	if c.a.db.lockTakeover() != nil {
		c.t.Fatal("the restart still excuses holders after the wait")
	}
}

// forgetOutage has st see no outage, as if the restart's excuse had run
// out, without waiting for it.
func forgetOutage(st *Store) {
	o := st.db.outage
	o.mu.Lock()
	o.lost, o.back, o.going = time.Time{}, time.Time{}, false
	o.mu.Unlock()
}

// keptRows is how many rows of spend session "s" keeps in shared_spend.
func keptRows(t *testing.T, st *Store) int {
	t.Helper()
	var n int
	if err := st.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM shared_spend WHERE tenant = $1 AND session_id = 's'`, st.tenant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// takesNone wants TakeDeadSpend on the fresh replica to give up nothing.
func (c *crashCase) takesNone(when string) {
	c.t.Helper()
	if dead, err := c.a.TakeDeadSpend(context.Background(), "s"); err != nil || len(dead) != 0 {
		c.t.Fatalf("TakeDeadSpend %s gave %+v, %v; want nothing", when, dead, err)
	}
}

// TestADeadStepsSpendSurvivesADatabaseCrash: replica A dies mid-step with
// $0.30 shared on agent_b's step lock, and the database crashes before
// anyone records it, emptying the unlogged locks. A replica opened on the
// restarted database counts that spend in its budget check, leaves it
// while the restart excuses holders (a live one would put its row back),
// then gives it up once, under A's key; A's late landing is refused, and
// once the spend is recorded nothing is left to take or count twice.
// Before, the crash took the spend with the lock row: no take found it,
// and the session's cost and budgets never counted it.
func TestADeadStepsSpendSurvivesADatabaseCrash(t *testing.T) {
	c := newCrashCase(t)
	ctx := context.Background()
	lb := c.take(c.holder, "agent_b")
	c.share(lb, 0.30, 3000)
	c.holder.db.held.remove(c.holder.tenant, lb.token) // A dies: its heartbeat renews nothing, it never lands
	c.crash()
	c.takesNone("while the restart excuses holders")
	c.counts(0.30, 3000, "after the crash, before any take")
	c.excuseOver()
	want := coordination.DeadSpend{Agent: "agent_b", InheritedSpend: coordination.InheritedSpend{Key: lb.token, CostUSD: 0.30, Tokens: 3000}}
	dead, err := c.a.TakeDeadSpend(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 || dead[0] != want {
		t.Fatalf("TakeDeadSpend after the crash gave %+v; want A's $0.30, 3,000 tokens under its key", dead)
	}
	c.counts(0.30, 3000, "with A's spend given up, not yet recorded")
	cost := 0.35
	if _, err := lb.Append(ctx, coordination.Entry{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "4",
		Usage: providers.Usage{Input: 3000, Output: 500, CostUSD: &cost}}); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("A's late landing: %v; want it refused (ErrLeaseLost): its spend is being recorded", err)
	}
	c.record(0.30, 3000, lb.token)
	c.counts(0.30, 3000, "once A's spend was recorded")
	c.takesNone("after the record")
	if n := keptRows(c.t, c.a); n != 0 {
		t.Errorf("%d rows kept in shared_spend after the record; want none", n)
	}
	if n := c.stepRows(); n != 1 {
		t.Errorf("%d step lock rows after the record; want agent_a's alone", n)
	}
}

// TestASpendLandedOrRecordedLeavesNothingToTakeAfterACrash: every way a
// shared spend reaches the ledger before a crash (a server step's landing,
// a host step's landing and its letting go, a cancelled call's record
// under its own key, a dead holder's spend taken without a step and
// recorded, and taken over by its agent's next step and recorded) leaves
// nothing kept, so a crash after them finds no dead spend to record again.
func TestASpendLandedOrRecordedLeavesNothingToTakeAfterACrash(t *testing.T) {
	c := newCrashCase(t)
	ctx := context.Background()
	h := c.holder
	usage := func(cost float64) providers.Usage { return providers.Usage{Input: 100, Output: 10, CostUSD: &cost} }
	answer := func(agent string, cost float64) coordination.Entry {
		return coordination.Entry{Agent: agent, Kind: coordination.KindAnswer, Content: "4", Usage: usage(cost)}
	}

	server := c.take(h, "agent_s")
	c.share(server, 0.10, 100)
	if _, err := server.AppendAndRelease(ctx, answer("agent_s", 0.12)); err != nil {
		t.Fatal(err)
	}
	host := c.take(h, "agent_h")
	c.share(host, 0.05, 50)
	if _, err := host.Append(ctx, answer("agent_h", 0.06)); err != nil {
		t.Fatal(err)
	}
	host.Release()
	cancelled := c.take(h, "agent_c")
	c.share(cancelled, 0.07, 70)
	cu := usage(0.08)
	if _, err := h.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionUsage, Agents: []string{"agent_c"},
		Usage: &cu, Spender: cancelled.token}); err != nil {
		t.Fatal(err)
	}
	cancelled.Release()
	c.a = h         // the take and the record below are the holder replica's own
	forgetOutage(h) // the server it opened on had just started
	dead := c.take(h, "agent_d")
	c.share(dead, 0.20, 200)
	c.dies(h, dead)
	taken, err := h.TakeDeadSpend(ctx, "s")
	if err != nil || len(taken) != 1 {
		t.Fatalf("TakeDeadSpend of agent_d's dead step: %+v, %v", taken, err)
	}
	c.record(0.20, 200, dead.token)
	over := c.take(h, "agent_t")
	c.share(over, 0.03, 30)
	c.dies(h, over)
	next := c.take(h, "agent_t")
	if got := next.TakenOverSpend(); len(got) != 1 {
		t.Fatalf("agent_t's next step took over %+v; want its dead holder's spend", got)
	}
	c.record(0.03, 30, over.token)
	if _, err := next.AppendAndRelease(ctx, answer("agent_t", 0.01)); err != nil {
		t.Fatal(err)
	}
	if n := keptRows(c.t, c.a); n != 0 {
		t.Fatalf("%d rows kept in shared_spend before the crash, every spend landed or recorded; want none", n)
	}

	c.crash()
	forgetOutage(c.a)
	c.takesNone("after the crash, every spend landed or recorded")
	c.counts(0.12+0.06+0.08+0.20+0.03+0.01, 110+110+110+200+30+110, "after the crash (the ledger alone)")
}

// TestALiveHoldersKeptSpendIsNotTakenAfterACrash: a replica whose step
// shared $0.30 lives through the database's crash. Its heartbeat puts its
// lock row back with that spend, which every budget check counts once,
// and no TakeDeadSpend takes it, however old its last share and though no
// outage excuses it any more: its row is held. Its landing lands, and
// leaves nothing kept.
func TestALiveHoldersKeptSpendIsNotTakenAfterACrash(t *testing.T) {
	c := newCrashCase(t)
	ctx := context.Background()
	lb := c.take(c.holder, "agent_b")
	c.share(lb, 0.30, 3000)
	c.crash()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var spent float64
		err := c.a.db.pool.QueryRow(ctx, `SELECT spent_cost FROM locks WHERE token = $1`, lb.token).Scan(&spent)
		if err == nil && spent == 0.30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the holder's heartbeat did not put its row back with its spend: $%v, %v", spent, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	forgetOutage(c.a)
	if _, err := c.a.db.pool.Exec(ctx, `UPDATE shared_spend SET reported_at = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	c.takesNone("with the holder alive")
	c.counts(0.30, 3000, "with the holder's row put back")
	cost := 0.35
	if _, err := lb.AppendAndRelease(ctx, coordination.Entry{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "4",
		Usage: providers.Usage{Input: 3000, Output: 500, CostUSD: &cost}}); err != nil {
		t.Fatalf("the live holder's landing after the crash: %v", err)
	}
	c.counts(0.35, 3500, "once it landed")
	if n := keptRows(c.t, c.a); n != 0 {
		t.Errorf("%d rows kept in shared_spend after the landing; want none", n)
	}
}

// sharedThenCrashed is agent_b's step on B with $0.30 and 3,000 tokens
// shared, B no longer renewing it, and its row taken by a crash
// (lockRowsLost).
func (c *deadSpendCase) sharedThenCrashed() *stepLock {
	c.t.Helper()
	l := c.take(c.b, "agent_b")
	c.share(l, 0.30, 3000)
	c.b.db.held.remove(c.b.tenant, l.token)
	lockRowsLost(c.t, c.a)
	return l
}

// lockRowsLost does to the locks table what a database crash does (empties
// it), and ages the spend kept in shared_spend past a lock's TTL: the
// crash cases that need no crash of a server of their own.
func lockRowsLost(t *testing.T, st *Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.db.pool.Exec(ctx, `DELETE FROM locks WHERE tenant = $1`, st.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.pool.Exec(ctx, `UPDATE shared_spend SET reported_at = now() - interval '1 minute' WHERE tenant = $1`, st.tenant); err != nil {
		t.Fatal(err)
	}
}

// TestASpendACrashLeftGoesOnItsAgentsLiveStepRow: B dies with $0.30
// shared on agent_b's step lock and a crash takes the row. The agent's
// next step, on A, makes a fresh row and inherits nothing; TakeDeadSpend
// gives B's spend up and puts it on that live row, where it counts once
// (not also as kept), outlives the step's landing, and goes with its
// record.
func TestASpendACrashLeftGoesOnItsAgentsLiveStepRow(t *testing.T) {
	c := newDeadSpendCase(t)
	ctx := context.Background()
	lb := c.sharedThenCrashed()
	next := c.take(c.a, "agent_b")
	if got := next.TakenOverSpend(); len(got) != 0 {
		t.Fatalf("the agent's next step, on a row the crash took, inherited %+v; want nothing", got)
	}
	c.counts(0.30, 3000, "with B's spend kept and no row counting it")
	dead, err := c.a.TakeDeadSpend(ctx, "s")
	if err != nil || len(dead) != 1 || dead[0].Key != lb.token || dead[0].CostUSD != 0.30 {
		t.Fatalf("TakeDeadSpend gave %+v, %v; want B's $0.30 under its key", dead, err)
	}
	c.counts(0.30, 3000, "with B's spend on the live step's row")
	c.share(next, 0.10, 100)
	c.counts(0.40, 3100, "with the live step sharing its own")
	cost := 0.10
	if _, err := next.AppendAndRelease(ctx, coordination.Entry{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "4",
		Usage: providers.Usage{Input: 90, Output: 10, CostUSD: &cost}}); err != nil {
		t.Fatal(err)
	}
	c.counts(0.40, 3100, "after the live step landed, B's record not yet")
	c.record(0.30, 3000, lb.token)
	c.counts(0.40, 3100, "once B's spend was recorded")
	if dead, err := c.a.TakeDeadSpend(ctx, "s"); err != nil || len(dead) != 0 {
		t.Errorf("TakeDeadSpend after the record: %+v, %v; want none", dead, err)
	}
	if n := keptRows(t, c.a); n != 0 {
		t.Errorf("%d rows kept in shared_spend; want none", n)
	}
}

// TestASpendACrashLeftIsGivenUpBesideAFencedRowOfItsAgent: after a crash
// took the row B's $0.30 was shared on, the agent's next step (on B as
// well) shares $0.10 and dies too. One TakeDeadSpend fences that step's
// row and gives up both spends, each under its key, each counted once
// until its record.
func TestASpendACrashLeftIsGivenUpBesideAFencedRowOfItsAgent(t *testing.T) {
	c := newDeadSpendCase(t)
	ctx := context.Background()
	first := c.sharedThenCrashed()
	second := c.take(c.b, "agent_b")
	c.share(second, 0.10, 100)
	c.dies(c.b, second)
	c.counts(0.40, 3100, "with both dead")
	dead, err := c.a.TakeDeadSpend(ctx, "s")
	if err != nil || len(dead) != 2 {
		t.Fatalf("TakeDeadSpend gave %+v, %v; want both dead spends", dead, err)
	}
	got := map[string]float64{dead[0].Key: dead[0].CostUSD, dead[1].Key: dead[1].CostUSD}
	if got[first.token] != 0.30 || got[second.token] != 0.10 {
		t.Fatalf("TakeDeadSpend gave %+v; want $0.30 under the first key and $0.10 under the second", dead)
	}
	c.counts(0.40, 3100, "with both given up")
	c.record(0.10, 100, second.token)
	c.counts(0.40, 3100, "with the second recorded")
	c.record(0.30, 3000, first.token)
	c.counts(0.40, 3100, "with both recorded")
	if dead, err := c.a.TakeDeadSpend(ctx, "s"); err != nil || len(dead) != 0 {
		t.Errorf("TakeDeadSpend after the records: %+v, %v; want none", dead, err)
	}
	if n := keptRows(t, c.a); n != 0 {
		t.Errorf("%d rows kept in shared_spend; want none", n)
	}
}
