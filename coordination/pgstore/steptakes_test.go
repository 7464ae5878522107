package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// Step lock takes made while one is in flight go together in the next, one
// round trip and one transaction (steptakes.go), each answered as its take
// alone would have been.

// takeReq is one LockStepWithLease of a group; takeAns its answer.
type takeReq struct{ id, agent string }

type takeAns struct {
	lock  coordination.StepLock
	lease *coordination.RunLease
	err   error
}

// stepTakeTrips is how many round trips c counted that took step locks.
func stepTakeTrips(c *QueryCounts) int64 {
	var n int64
	for _, q := range c.Top(1<<20, 1000) {
		if strings.Contains(q.Kind, "max(step)") {
			n += q.Count
		}
	}
	return n
}

// takeTogether makes reqs' LockStepWithLease on a while the take of
// session "lead" (which it creates) is in flight, waiting for a
// connection of a's pool, which the test holds (holdPool), so they gather
// for the next group instead of trusting the timing; it returns their
// answers and how many round trips taking step locks they took. The
// lead's take waits for a connection, not for a row: a take's row waits
// are bounded (stepTakeWait), and one held up at a row past that would
// take its lock again alone. Every lock taken is let go when the test
// ends.
func takeTogether(t *testing.T, a *Store, c *QueryCounts, reqs []takeReq) ([]takeAns, int64) {
	t.Helper()
	ctx := context.Background()
	sessionsOn(t, a, "lead")
	owner := coordination.ThisProcess("test")
	release := holdPool(t, a)
	before := stepTakeTrips(c)
	lead := make(chan error, 1)
	go func() {
		l, err := a.LockStep(ctx, "lead", "agent_a")
		if err == nil {
			t.Cleanup(l.Release)
		}
		lead <- err
	}()
	await(t, "the lead's take in flight", func() bool { return a.db.stepTakes.inFlight() == 1 })
	out := make([]takeAns, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() {
			lock, lease, err := a.LockStepWithLease(ctx, r.id, r.agent, owner, time.Minute)
			out[i] = takeAns{lock, lease, err}
		})
	}
	await(t, "every take waiting for the next group", func() bool {
		return a.db.stepTakes.waiting() == len(reqs)
	})
	release()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, o := range out {
		if o.lock != nil {
			t.Cleanup(o.lock.Release)
		}
	}
	// The lead's take went alone, in one round trip, before them.
	return out, stepTakeTrips(c) - before - 1
}

// landSteps lands n steps of agent in session id, one after another.
func landSteps(t *testing.T, a *Store, id, agent string, n int) {
	t.Helper()
	ctx := context.Background()
	for range n {
		l, err := a.LockStep(ctx, id, agent)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Append(ctx, coordination.Entry{Agent: agent, Kind: coordination.KindAnswer, Content: "4"})
		l.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// storedLease is the version of the agent's lease row, 0 for none.
func storedLease(t *testing.T, a *Store, id, agent string) int64 {
	t.Helper()
	var v int64
	err := a.db.pool.QueryRow(context.Background(), `SELECT version FROM leases WHERE tenant = $1 AND session_id = $2 AND agent_id = $3`, a.tenant, id, agent).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestStepLocksTakenTogetherAreOneRoundTrip: the step locks of sessions
// taken while another take is in flight go in one round trip, and each is
// numbered after its own agent's latest step and claims its step lease.
func TestStepLocksTakenTogetherAreOneRoundTrip(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	const sessions = 6
	var reqs []takeReq
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		sessionsOn(t, a, id)
		landSteps(t, a, id, "agent_a", i)
		reqs = append(reqs, takeReq{id, "agent_a"})
	}
	out, trips := takeTogether(t, a, c, reqs)
	if trips != 1 {
		t.Errorf("%d step locks taken together took %d round trips, want 1", sessions, trips)
	}
	for i, o := range out {
		id := reqs[i].id
		if o.err != nil {
			t.Errorf("session %s: %v", id, o.err)
			continue
		}
		if got := o.lock.Step(); got != i+1 {
			t.Errorf("session %s, after %d steps: the lock numbers step %d, want %d", id, i, got, i+1)
		}
		if o.lease == nil {
			t.Errorf("session %s: no step lease claimed with the lock", id)
		} else if v := storedLease(t, a, id, "agent_a"); v != o.lease.Version {
			t.Errorf("session %s: the stored lease is version %d, the claim says %d", id, v, o.lease.Version)
		}
	}
}

// TestATakeRefusedInAGroupIsRefusedAlone: a take whose lock a live holder
// has is refused busy and claims nothing; the others of its group, two
// agents of one session among them, take theirs.
func TestATakeRefusedInAGroupIsRefusedAlone(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	sessionsOn(t, a, "s0", "s1")
	heldByAnother(t, a, "s0", "agent_a")
	landSteps(t, a, "s0", "agent_b", 2)
	reqs := []takeReq{{"s1", "agent_a"}, {"s0", "agent_c"}, {"s0", "agent_a"}, {"s0", "agent_b"}, {"missing", "agent_a"}}
	out, trips := takeTogether(t, a, c, reqs)
	if trips != 1 {
		t.Errorf("a group took %d round trips, want 1", trips)
	}
	wantStep := map[takeReq]int{{"s1", "agent_a"}: 1, {"s0", "agent_c"}: 1, {"s0", "agent_b"}: 3}
	for i, o := range out {
		r := reqs[i]
		switch r {
		case takeReq{"s0", "agent_a"}:
			if !errors.Is(o.err, coordination.ErrAgentBusy) || o.lease != nil {
				t.Errorf("the held lock's take = %v, lease %v; want ErrAgentBusy and none", o.err, o.lease)
			}
			if v := storedLease(t, a, "s0", "agent_a"); v != 0 {
				t.Errorf("the held lock's take claimed lease version %d", v)
			}
		case takeReq{"missing", "agent_a"}:
			if !errors.Is(o.err, coordination.ErrSessionNotFound) || o.lease != nil {
				t.Errorf("a missing session's take = %v, lease %v; want ErrSessionNotFound and none", o.err, o.lease)
			}
		default:
			if o.err != nil || o.lease == nil {
				t.Errorf("%v: %v, lease %v; want the lock and a lease", r, o.err, o.lease)
				continue
			}
			if got := o.lock.Step(); got != wantStep[r] {
				t.Errorf("%v: step %d, want %d", r, got, wantStep[r])
			}
		}
	}
}

// TestAGroupWhoseTakeRaisesTakesEachLockAlone: a statement that raises
// rolls the group's transaction back whole; each member then takes its
// lock alone, the raising one meeting its own error there.
func TestAGroupWhoseTakeRaisesTakesEachLockAlone(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	sessionsOn(t, a, "s0", "bad", "s1")
	landSteps(t, a, "s1", "agent_a", 1)
	if _, err := a.db.pool.Exec(ctx, `CREATE FUNCTION planted_refusal() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.session_id = 'bad' THEN RAISE EXCEPTION 'planted refusal of session bad'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER planted_refusal BEFORE INSERT ON locks FOR EACH ROW EXECUTE FUNCTION planted_refusal()`); err != nil {
		t.Fatal(err)
	}
	reqs := []takeReq{{"s0", "agent_a"}, {"bad", "agent_a"}, {"s1", "agent_a"}}
	out, trips := takeTogether(t, a, c, reqs)
	if trips != 1+int64(len(reqs)) {
		t.Errorf("a group that raised and its takes alone took %d round trips, want %d", trips, 1+len(reqs))
	}
	if o := out[1]; o.err == nil || !strings.Contains(o.err.Error(), "planted refusal") || errors.Is(o.err, coordination.ErrAgentBusy) {
		t.Errorf("the raising take = %v; want its own error", o.err)
	}
	for i, want := range map[int]int{0: 1, 2: 2} {
		o := out[i]
		if o.err != nil || o.lease == nil {
			t.Errorf("%v: %v, lease %v; want the lock and a lease", reqs[i], o.err, o.lease)
			continue
		}
		if got := o.lock.Step(); got != want {
			t.Errorf("%v: step %d, want %d", reqs[i], got, want)
		}
		if v := storedLease(t, a, reqs[i].id, "agent_a"); v != o.lease.Version {
			t.Errorf("%v: the stored lease is version %d, the claim says %d", reqs[i], v, o.lease.Version)
		}
	}
	if v := storedLease(t, a, "bad", "agent_a"); v != 0 {
		t.Errorf("the raising take claimed lease version %d", v)
	}
}

// TestAGroupWithAClaimCommitsDurably: a group's takes each turn
// synchronous_commit off for its transaction; a claim that writes turns it
// back on, so the claims come after every take and a group with one ends
// on the session's own setting, whichever member's claim wrote; a group
// with none, or whose claims were all refused, stays off as a take alone
// does. A server whose own default is off could not tell these apart, so
// it is skipped there.
func TestAGroupWithAClaimCommitsDurably(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	reset := durableReset(t, s)
	sessionsOn(t, s, "s1", "s2", "s3")
	heldByAnother(t, s, "s3", "agent_a")
	lease := firstClaim()
	claim := func() *claimFold { return &claimFold{next: lease} }
	take := func(id string, f *claimFold) *stepTake {
		return &stepTake{s: s, id: id, agent: "agent_a", fold: f, token: "tok-" + id}
	}
	// send runs the group's statements in a transaction and reports
	// synchronous_commit after them; nothing is kept.
	send := func(ts []*stepTake) string {
		t.Helper()
		return syncCommitAfter(t, s, "ROLLBACK", func(b *pgx.Batch) { queueTakes(b, ts, nil) },
			func(br pgx.BatchResults) error { return readTakes(br, ts) })
	}
	for _, tc := range []struct {
		name string
		ts   []*stepTake
		want string
	}{
		{"claims in every member, the last refused", []*stepTake{take("s1", claim()), take("s2", claim()), take("s3", claim())}, reset},
		{"a claim in the first member only", []*stepTake{take("s1", claim()), take("s2", nil), take("s3", nil)}, reset},
		{"no claim", []*stepTake{take("s1", nil), take("s2", nil)}, "off"},
		{"only a refused claim", []*stepTake{take("s1", nil), take("s3", claim())}, "off"},
	} {
		if got := send(tc.ts); got != tc.want {
			t.Errorf("%s: synchronous_commit %q after the group, want %q", tc.name, got, tc.want)
		}
	}
}

// TestARowWaitInAGroupHoldsUpNoOtherTake: a group's take that waits for a
// row another transaction holds (a session's row a delete holds FOR
// UPDATE, which the take's foreign key waits for) gives up after
// stepTakeWait, and the group's members take their locks alone: the
// others are not held up until the delete ends, and the waiting one takes
// its lock once it does.
func TestARowWaitInAGroupHoldsUpNoOtherTake(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	sessionsOn(t, a, "s1", "slow")
	tx := holdSessionRow(t, dsn, a, "slow").tx
	// The delete ends once the other take's lock is held, or after 5 s.
	heldMeanwhile := make(chan bool, 1)
	// The rollback goes before the answer, so the close of its connection
	// as the test ends never runs beside it (a race on the connection).
	go func() {
		held := false
		for deadline := time.Now().Add(5 * time.Second); !held && time.Now().Before(deadline); {
			var n int
			if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = $1 AND session_id = 's1'`, a.tenant).Scan(&n); err == nil && n == 1 {
				held = true
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = tx.Rollback(ctx)
		heldMeanwhile <- held
	}()
	out, _ := takeTogether(t, a, c, []takeReq{{"slow", "agent_a"}, {"s1", "agent_a"}})
	if !<-heldMeanwhile {
		t.Error("a take grouped with one waiting for a session's row held by a delete waited for the delete too")
	}
	for i, o := range out {
		if o.err != nil || o.lock.Step() != 1 {
			t.Errorf("take %d: %v; want step 1's lock", i, o.err)
		}
	}
}

// TestATakeAloneWaitingForARowHoldsUpNoOtherTake: a take sent alone (a
// group of one, no other take in flight) that waits for a row another
// transaction holds (a session's row a delete holds) must not hold up the
// replica's other takes for as long as that transaction lasts: taken
// alone, as before grouping, a take of another session went at once.
func TestATakeAloneWaitingForARowHoldsUpNoOtherTake(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := countedReplica(t, dsn, &QueryCounts{})
	ctx := context.Background()
	sessionsOn(t, a, "s1", "slow")
	hold := holdSessionRow(t, dsn, a, "slow")
	slow := lockStepOff(ctx, a, "slow", "agent_a")
	hold.waitBlocked(t, a, 1)
	// The delete ends after 5 s: a take held up until then says so
	// rather than hanging the test. Waited for before the test ends and
	// its connection's rollback and close run, which would run beside it.
	rolledBack := make(chan struct{})
	go func() {
		defer close(rolledBack)
		time.Sleep(5 * time.Second)
		_ = hold.tx.Rollback(ctx)
	}()
	defer func() { <-rolledBack }()
	quick, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	l, err := a.LockStep(quick, "s1", "agent_a")
	took := time.Since(start)
	if err != nil || took > 3*time.Second {
		t.Errorf("the take of another session, while a take alone waited for a delete's row: %v after %v (its context ends at 3 s); want it taken at once", err, took.Round(time.Millisecond))
	}
	if err == nil {
		l.Release()
	}
	if err := <-slow; err != nil {
		t.Errorf("the waiting take, once the row was let go: %v", err)
	}
}
