package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// Landings made while others are in flight commit together, in one
// transaction (landgroup.go). The tests keep every leader busy with
// landings waiting for a connection of a pool the test holds
// (leadersBusy), so the landings made meanwhile wait for the next group.

// landingTransactions records, for each batch that writes a step's entry
// (a landing's transaction, or a group's), the sessions it writes
// entries of.
type landingTransactions struct {
	mu      sync.Mutex
	batches [][]string
}

func (c *landingTransactions) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (c *landingTransactions) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *landingTransactions) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sessions []string
	for _, q := range d.Batch.QueuedQueries {
		if q.SQL == entryInsert {
			sessions = append(sessions, q.Arguments[1].(string))
		}
	}
	if sessions != nil {
		c.mu.Lock()
		c.batches = append(c.batches, sessions)
		c.mu.Unlock()
	}
	return ctx
}

func (c *landingTransactions) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *landingTransactions) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// of counts the batches that wrote an entry of any of sessions ids.
func (c *landingTransactions) of(ids ...string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, b := range c.batches {
		if slices.ContainsFunc(b, func(id string) bool { return slices.Contains(ids, id) }) {
			n++
		}
	}
	return n
}

// leadersBusy keeps every landing leader of a busy: with each connection
// of a's pool held, agent_a's answers in landLeaders sessions of their
// own ("held0", …) each lead a group and wait for a connection. Landings
// made meanwhile wait for a leader, and go as one group once release
// gives the connections back; done waits for the busy landings' answers.
func leadersBusy(t *testing.T, a *Store) (release func(), done func() ([]coordination.Entry, []error)) {
	t.Helper()
	held := landingsOf(t, a, "agent_a", ids("held", landLeaders)...)
	release = holdPool(t, a)
	done = landAll(held)
	await(t, "every landing leader busy", func() bool { return a.db.landings.inFlight() == landLeaders })
	return release, done
}

// landGrouped lands an answer at each of later while every leader is
// busy (leadersBusy), once they all wait for a leader, so they go as one
// group (landGroupMax of them at most) once the busy landings have a
// connection; it returns what the busy landings and later's returned.
func landGrouped(t *testing.T, a *Store, later []coordination.StepLock) (held, grouped func() ([]coordination.Entry, []error)) {
	t.Helper()
	release, held := leadersBusy(t, a)
	grouped = landAll(later)
	await(t, fmt.Sprint(len(later), " landings waiting for a leader"), func() bool { return a.db.landings.waiting() == len(later) })
	release()
	return held, grouped
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

// TestLandingsMadeWhileOthersAreInFlightCommitInOneTransaction: a
// group's worth of landings (landGroupMax) made while every leader is
// busy (landLeaders of them, leadersBusy) wait, and go in one transaction
// once the busy ones land. (The other tests make at most landGroupMax
// landings meanwhile, so that they are one group.)
func TestLandingsMadeWhileOthersAreInFlightCommitInOneTransaction(t *testing.T) {
	c := &landingTransactions{}
	a := replicaOn(t, pgtest.Schema(t), Options{Tracer: c})
	later := landingsOf(t, a, "agent_a", ids("later", landGroupMax)...)
	heldDone, laterDone := landGrouped(t, a, later)
	for _, done := range []func() ([]coordination.Entry, []error){heldDone, laterDone} {
		out, errs := done()
		for i, err := range errs {
			if err != nil || out[i].AnswerNum != 1 {
				t.Errorf("landing %d: %+v, %v; want answer 1", i, out[i], err)
			}
		}
	}
	if n := c.of(ids("later", landGroupMax)...); n != 1 {
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
	a := replicaOn(t, pgtest.Schema(t), Options{})
	later := landingsOf(t, a, "agent_a", ids("later", 6)...)
	// later3's lock row passes to another holder.
	if _, err := a.db.pool.Exec(context.Background(), `UPDATE locks SET token = 'another-holder' WHERE tenant = $1 AND session_id = 'later3' AND name = 'step:agent_a'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	heldDone, laterDone := landGrouped(t, a, later)
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
	a := replicaOn(t, pgtest.Schema(t), Options{})
	sessionsOn(t, a, "s")
	landStep(t, a, "s", "agent_a", "the first")
	later := append(landingsOf(t, a, "agent_a", "s"), landingsOf(t, a, "agent_b", "s")...)
	heldDone, laterDone := landGrouped(t, a, later)
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

// TestAGroupCutMidwayWritesNothing: a group whose connection is lost
// midway through its transaction, the landings before the cut written in
// it, leaves none of them; each is told of an outage, and lands when
// tried again.
func TestAGroupCutMidwayWritesNothing(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	later := landingsOf(t, a, "agent_a", ids("later", 6)...)
	// later5, last in the group's order, ends the backend its entry is
	// inserted on: the connection is lost after the other five's
	// statements ran in the transaction.
	if _, err := a.db.pool.Exec(ctx, `CREATE FUNCTION cut_midway() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.session_id = 'later5' THEN PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(30); END IF; RETURN NEW; END $$;
		CREATE TRIGGER cut_midway BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION cut_midway()`); err != nil {
		t.Fatal(err)
	}
	heldDone, laterDone := landGrouped(t, a, later)
	heldDone()
	_, errs := laterDone()
	if _, err := a.db.pool.Exec(ctx, `DROP TRIGGER cut_midway ON entries`); err != nil {
		t.Fatal(err)
	}
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
		if _, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, newAnswer("", fmt.Sprint("answer ", i))); err != nil {
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
