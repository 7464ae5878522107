package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// Landings made while others are in flight commit together, in one
// transaction (landgroup.go). The tests hold the first landings' lock rows
// from another connection, so they stay in flight while more are made.

// landingTransactions counts the batches that write a step's entry: a
// landing's transaction, or a group's.
type landingTransactions struct{ n atomic.Int64 }

func (c *landingTransactions) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (c *landingTransactions) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *landingTransactions) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, q := range d.Batch.QueuedQueries {
		if q.SQL == entryInsert {
			c.n.Add(1)
			break
		}
	}
	return ctx
}

func (c *landingTransactions) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *landingTransactions) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// rowHold is a transaction of another connection holding step lock rows.
type rowHold struct {
	tx  pgx.Tx
	pid uint32
}

// holdLockRows holds the step lock rows of sessions ids (FOR UPDATE), so
// their landings wait at their lock's fence.
func holdLockRows(t *testing.T, st *Store, ids ...string) *rowHold {
	t.Helper()
	ctx := context.Background()
	tx, err := st.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(ctx, `SELECT 1 FROM locks WHERE tenant = $1 AND session_id = ANY($2) AND name LIKE 'step:%' FOR UPDATE`, st.tenant, ids); err != nil {
		t.Fatal(err)
	}
	return &rowHold{tx: tx, pid: tx.Conn().PgConn().PID()}
}

// waitBlocked waits until at least n backends wait for h's rows, and
// returns their pids.
func (h *rowHold) waitBlocked(t *testing.T, st *Store, n int) []uint32 {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var pids []uint32
		if err := st.db.pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, int(h.pid)).Scan(&pids); err != nil {
			t.Fatal(err)
		}
		if len(pids) >= n {
			return pids
		}
	}
	t.Fatalf("no %d landings came to wait for the held rows", n)
	return nil
}

// landingsOf locks agent's step in each session.
func landingsOf(t *testing.T, st *Store, agent string, ids ...string) []coordination.StepLock {
	t.Helper()
	var ls []coordination.StepLock
	for _, id := range ids {
		if err := st.Create(context.Background(), storetest.NewSession(id)); err != nil && !errors.Is(err, coordination.ErrSessionExists) {
			t.Fatal(err)
		}
		l, err := st.LockStep(context.Background(), id, agent)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

// landAll lands an answer at each lock at once, and returns what each
// landing returned once they all have.
func landAll(ls []coordination.StepLock) func() ([]coordination.Entry, []error) {
	out, errs := make([]coordination.Entry, len(ls)), make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Go(func() {
			out[i], errs[i] = l.(coordination.ReleasingStepLock).AppendAndRelease(context.Background(), newAnswer("", fmt.Sprint("answer ", i)))
		})
	}
	return func() ([]coordination.Entry, []error) {
		wg.Wait()
		return out, errs
	}
}

func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

// TestLandingsMadeWhileOthersAreInFlightCommitInOneTransaction: landings
// held at their fence keep every leader busy (landLeaders of them); a
// group's worth more of other sessions (landGroupMax), made meanwhile,
// wait, and once the held ones land, the waiting ones go in one
// transaction. (The other tests hold every leader the same way, and make
// at most landGroupMax landings meanwhile, so that they are one group.)
func TestLandingsMadeWhileOthersAreInFlightCommitInOneTransaction(t *testing.T) {
	c := &landingTransactions{}
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{Tracer: c})
	b := replicaOn(t, dsn, Options{})
	held := landingsOf(t, a, "agent_a", ids("held", landLeaders)...)
	later := landingsOf(t, a, "agent_a", ids("later", landGroupMax)...)
	h := holdLockRows(t, b, ids("held", landLeaders)...)
	heldDone := landAll(held)
	h.waitBlocked(t, b, 1)
	time.Sleep(300 * time.Millisecond) // the other held landings queue or block too
	before := c.n.Load()
	laterDone := landAll(later)
	time.Sleep(300 * time.Millisecond) // they wait for a leader
	if err := h.tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, done := range []func() ([]coordination.Entry, []error){heldDone, laterDone} {
		out, errs := done()
		for i, err := range errs {
			if err != nil || out[i].AnswerNum != 1 {
				t.Errorf("landing %d: %+v, %v; want answer 1", i, out[i], err)
			}
		}
	}
	if n := c.n.Load() - before; n != 1 {
		t.Errorf("the %d landings made while others were in flight went in %d transactions, want 1", landGroupMax, n)
	}
	for _, id := range append(ids("held", landLeaders), ids("later", landGroupMax)...) {
		lg, err := a.Ledger(context.Background(), id)
		if err != nil || len(lg.Agents["agent_a"]) != 1 {
			t.Errorf("session %s's ledger %+v, %v; want agent_a's one answer", id, lg, err)
		}
	}
}

// TestALandingRefusedInAGroupFailsAloneAndTheOthersLand: a group one of
// whose landings lost its lock writes nothing; each lands again alone, so
// the one refused is told its lock was lost and the others land.
func TestALandingRefusedInAGroupFailsAloneAndTheOthersLand(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	b := replicaOn(t, dsn, Options{})
	held := landingsOf(t, a, "agent_a", ids("held", landLeaders)...)
	later := landingsOf(t, a, "agent_a", ids("later", 6)...)
	// later3's lock row passes to another holder.
	if _, err := b.db.pool.Exec(context.Background(), `UPDATE locks SET token = 'another-holder' WHERE tenant = $1 AND session_id = 'later3' AND name = 'step:agent_a'`, b.tenant); err != nil {
		t.Fatal(err)
	}
	h := holdLockRows(t, b, ids("held", landLeaders)...)
	heldDone := landAll(held)
	h.waitBlocked(t, b, 1)
	time.Sleep(300 * time.Millisecond)
	laterDone := landAll(later)
	time.Sleep(300 * time.Millisecond)
	if err := h.tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, errs := heldDone(); errors.Join(errs...) != nil {
		t.Errorf("the held landings: %v", errors.Join(errs...))
	}
	out, errs := laterDone()
	for i, err := range errs {
		if i == 3 {
			if !errors.Is(err, coordination.ErrLeaseLost) {
				t.Errorf("the landing whose lock was lost returned %v, want ErrLeaseLost", err)
			}
			continue
		}
		if err != nil || out[i].AnswerNum != 1 {
			t.Errorf("landing %d: %+v, %v; want answer 1", i, out[i], err)
		}
	}
	for i, id := range ids("later", 6) {
		want := 1
		if i == 3 {
			want = 0
		}
		if n := rowsOf(t, a, "entries", id); n != want {
			t.Errorf("session %s holds %d entries, want %d", id, n, want)
		}
	}
}

// TestTwoAgentsOfASessionInOneGroupEachCountTheirAnswers: two landings
// of one session in one group, each numbered by its own agent's answers.
func TestTwoAgentsOfASessionInOneGroupEachCountTheirAnswers(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	b := replicaOn(t, dsn, Options{})
	held := landingsOf(t, a, "agent_a", ids("held", landLeaders)...)
	if err := a.Create(context.Background(), storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "the first")
	later := append(landingsOf(t, a, "agent_a", "s"), landingsOf(t, a, "agent_b", "s")...)
	h := holdLockRows(t, b, ids("held", landLeaders)...)
	heldDone := landAll(held)
	h.waitBlocked(t, b, 1)
	time.Sleep(300 * time.Millisecond)
	laterDone := landAll(later)
	time.Sleep(300 * time.Millisecond)
	if err := h.tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	heldDone()
	out, errs := laterDone()
	if errors.Join(errs...) != nil || out[0].AnswerNum != 2 || out[1].AnswerNum != 1 {
		t.Errorf("agent_a's second answer and agent_b's first landed as %+v, %v; want answers 2 and 1", out, errs)
	}
	lg, err := a.Ledger(context.Background(), "s")
	if err != nil || len(lg.Agents["agent_a"]) != 2 || lg.Agents["agent_a"][1].AnswerNum != 2 || len(lg.Agents["agent_b"]) != 1 || lg.Agents["agent_b"][0].AnswerNum != 1 {
		t.Errorf("the ledger %+v, %v; want agent_a's answers 1 and 2, agent_b's 1", lg, err)
	}
}

// TestAGroupCutMidwayWritesNothing: a group whose connection is killed
// while one of its landings waits at its fence, the ones before it
// written in the transaction, leaves none of them; each is told of an
// outage, and lands when tried again.
func TestAGroupCutMidwayWritesNothing(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	b := replicaOn(t, dsn, Options{})
	held := landingsOf(t, a, "agent_a", ids("held", landLeaders)...)
	later := landingsOf(t, a, "agent_a", ids("later", 6)...)
	h := holdLockRows(t, b, ids("held", landLeaders)...)
	// later5, last in the group's order, waits at its fence in the group.
	last := holdLockRows(t, b, "later5")
	heldDone := landAll(held)
	h.waitBlocked(t, b, 1)
	time.Sleep(300 * time.Millisecond)
	laterDone := landAll(later)
	time.Sleep(300 * time.Millisecond)
	if err := h.tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	pids := last.waitBlocked(t, b, 1)
	for _, pid := range pids {
		if _, err := b.db.pool.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, int(pid)); err != nil {
			t.Fatal(err)
		}
	}
	heldDone()
	_, errs := laterDone()
	_ = last.tx.Rollback(context.Background())
	landed := 0
	for i, id := range ids("later", 6) {
		if rowsOf(t, a, "entries", id) == 1 {
			landed++
		} else if !a.Unavailable(errs[i]) {
			t.Errorf("the landing of %s, not written, returned %v; want an outage", id, errs[i])
		}
	}
	if landed != 0 {
		t.Errorf("%d of the group's 6 landings were written, want none: a group is all or nothing", landed)
	}
	// Tried again, each that failed lands.
	for i, l := range later {
		if errs[i] == nil {
			continue
		}
		if _, err := l.(coordination.ReleasingStepLock).AppendAndRelease(context.Background(), newAnswer("", fmt.Sprint("answer ", i))); err != nil {
			t.Errorf("landing %d tried again: %v", i, err)
		}
	}
}

// rowsOf counts a table's rows of session id.
func rowsOf(t *testing.T, st *Store, table, id string) int {
	t.Helper()
	var n int
	if err := st.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE tenant = $1 AND session_id = $2`, st.tenant, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
