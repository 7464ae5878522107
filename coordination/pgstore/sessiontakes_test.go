package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// Session lock takes and let-gos made while one is in flight go together
// in the next, one statement each (sessiontakes.go), each answered as its
// take or let-go alone would have been.

// sessionTakeTrips is how many round trips c counted that took session
// locks (lockTake's CTE, without a step lock's numbering).
func sessionTakeTrips(c *QueryCounts) int64 {
	var n int64
	for _, q := range c.Top(1<<20, 1000) {
		if strings.Contains(q.Kind, "lockcfg") && !strings.Contains(q.Kind, "max(step)") {
			n += q.Count
		}
	}
	return n
}

// letGoTrips is how many round trips c counted that let locks go.
func letGoTrips(c *QueryCounts) int64 {
	var n int64
	for _, q := range c.Top(1<<20, 1000) {
		if strings.Contains(q.Kind, "massgen_let_go") {
			n += q.Count
		}
	}
	return n
}

// lockSessionsTogether takes the session locks of ids on a while the take
// of session "lead" (which it creates) is in flight, held by holdTable, so
// they gather for the next group instead of trusting the timing; ctxs, if
// set, are the takes' contexts. It returns their unlocks and errors and
// how many round trips taking session locks they took once the lead's was
// sent, and the lead's unlock.
func lockSessionsTogether(t *testing.T, dsn string, a *Store, c *QueryCounts, ids []string, ctxs map[string]context.Context) ([]func(), []error, int64, func()) {
	t.Helper()
	takes := make([]func() (func(), error), len(ids))
	for i, id := range ids {
		tctx := context.Background()
		if c, ok := ctxs[id]; ok {
			tctx = c
		}
		takes[i] = func() (func(), error) { return a.LockSession(tctx, id) }
	}
	return sessionTakesTogether(t, dsn, a, c, takes)
}

// sessionTakesTogether makes takes (session lock takes on a's DB, of any of its
// tenants) while the take of a's session "lead" (which it creates) is in
// flight, as lockSessionsTogether does, and returns the same.
func sessionTakesTogether(t *testing.T, dsn string, a *Store, c *QueryCounts, takes []func() (func(), error)) ([]func(), []error, int64, func()) {
	t.Helper()
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("lead")); err != nil {
		t.Fatal(err)
	}
	release := holdTable(t, dsn, "locks")
	sent := sessionTakeTrips(c)
	type answer struct {
		unlock func()
		err    error
	}
	lead := make(chan answer, 1)
	go func() {
		u, err := a.LockSession(ctx, "lead")
		lead <- answer{u, err}
	}()
	await(t, "the lead's take sent", func() bool { return sessionTakeTrips(c) > sent })
	before := sessionTakeTrips(c)
	unlocks, errs := make([]func(), len(takes)), make([]error, len(takes))
	var wg sync.WaitGroup
	for i, take := range takes {
		wg.Go(func() { unlocks[i], errs[i] = take() })
	}
	await(t, "every take waiting for the next group or sent", func() bool {
		return a.db.sessionTakes.waiting()+int(sessionTakeTrips(c)-before) >= len(takes)
	})
	release()
	l := <-lead
	if l.err != nil {
		t.Fatal(l.err)
	}
	wg.Wait()
	return unlocks, errs, sessionTakeTrips(c) - before, l.unlock
}

// lockRows is how many session lock rows the sessions of ids have.
func lockRows(t *testing.T, a *Store, ids []string) int {
	t.Helper()
	var n int
	if err := a.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM locks WHERE tenant = $1 AND session_id = ANY($2) AND name = 'session'`, a.tenant, ids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSessionLocksTakenAndLetGoTogetherAreOneRoundTripEach: the session
// locks of sessions taken while another take is in flight go in one round
// trip, each held (another replica's take is refused), and their let-gos
// made while another is in flight go in one more, each row gone.
func TestSessionLocksTakenAndLetGoTogetherAreOneRoundTripEach(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	b := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("s%d", i)
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	unlocks, errs, trips, leadUnlock := lockSessionsTogether(t, dsn, a, c, ids, nil)
	if trips != 1 {
		t.Errorf("%d session locks taken together took %d round trips, want 1", len(ids), trips)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("session %s: %v", ids[i], err)
		}
	}
	for _, id := range ids {
		if tok, err := b.tryLock(ctx, id, "session"); err != nil || tok != "" {
			t.Errorf("another replica's take of session %s's lock, held: %q, %v; want refused", id, tok, err)
		}
	}
	// The let-gos gather behind the lead's, held on the locks table.
	release := holdTable(t, dsn, "locks")
	sent := letGoTrips(c)
	leadGone := make(chan struct{})
	go func() { leadUnlock(); close(leadGone) }()
	await(t, "the lead's let-go sent", func() bool { return letGoTrips(c) > sent })
	before := letGoTrips(c)
	var wg sync.WaitGroup
	for _, u := range unlocks {
		wg.Go(u)
	}
	await(t, "every let-go waiting for the next group or sent", func() bool {
		return a.db.sessionLetGos.waiting()+int(letGoTrips(c)-before) >= len(ids)
	})
	release()
	<-leadGone
	wg.Wait()
	if n := letGoTrips(c) - before; n != 1 {
		t.Errorf("%d session locks let go together took %d round trips, want 1", len(ids), n)
	}
	if n := lockRows(t, a, append(ids, "lead")); n != 0 {
		t.Errorf("%d session lock rows left after every let-go, want 0", n)
	}
}

// TestASessionTakeRefusedInAGroupIsRefusedAlone: a take whose lock another
// replica holds waits on for it, and one of a missing session is told so;
// the others of their group take theirs.
func TestASessionTakeRefusedInAGroupIsRefusedAlone(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	for _, id := range []string{"s0", "held"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.db.pool.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at) VALUES ($1, 'held', 'session', 'tok-held', now() + interval '1 minute')`, a.tenant); err != nil {
		t.Fatal(err)
	}
	// The held one waits for the other replica until its context ends.
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ids := []string{"s0", "held", "missing"}
	unlocks, errs, _, lead := lockSessionsTogether(t, dsn, a, c, ids, map[string]context.Context{"held": short})
	lead()
	if errs[0] != nil {
		t.Errorf("the free session's take: %v", errs[0])
	} else {
		unlocks[0]()
	}
	if !errors.Is(errs[1], context.DeadlineExceeded) || !strings.Contains(errs[1].Error(), "held by another replica") {
		t.Errorf("the held session's take = %v; want it to wait for the other replica until its context ends", errs[1])
	}
	if !errors.Is(errs[2], coordination.ErrSessionNotFound) {
		t.Errorf("a missing session's take = %v; want ErrSessionNotFound", errs[2])
	}
	var tok string
	if err := a.db.pool.QueryRow(ctx, `SELECT token FROM locks WHERE tenant = $1 AND session_id = 'held' AND name = 'session'`, a.tenant).Scan(&tok); err != nil || tok != "tok-held" {
		t.Errorf("the held lock's row: token %q, %v; want the other replica's, untouched", tok, err)
	}
}

// TestASessionTakeGroupThatRaisesTakesEachLockAlone: a statement that
// raises rolls the group back whole; each member then takes its lock
// alone, the raising one meeting its own error there.
func TestASessionTakeGroupThatRaisesTakesEachLockAlone(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	for _, id := range []string{"s0", "bad", "s1"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.db.pool.Exec(ctx, `CREATE FUNCTION planted_refusal() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.session_id = 'bad' THEN RAISE EXCEPTION 'planted refusal of session bad'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER planted_refusal BEFORE INSERT ON locks FOR EACH ROW EXECUTE FUNCTION planted_refusal()`); err != nil {
		t.Fatal(err)
	}
	ids := []string{"s0", "bad", "s1"}
	unlocks, errs, trips, lead := lockSessionsTogether(t, dsn, a, c, ids, nil)
	lead()
	if trips != 1+int64(len(ids)) {
		t.Errorf("a group that raised and its takes alone took %d round trips, want %d", trips, 1+len(ids))
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "planted refusal") {
		t.Errorf("the raising take = %v; want its own error", errs[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil {
			t.Errorf("session %s: %v; want its lock", ids[i], errs[i])
			continue
		}
		if n := lockRows(t, a, []string{ids[i]}); n != 1 {
			t.Errorf("session %s: %d lock rows, want 1", ids[i], n)
		}
		unlocks[i]()
	}
}

// TestARowWaitInASessionGroupHoldsUpNoOtherTake: a group's take that waits
// for a row another transaction holds (a session's row a delete holds,
// which the take's foreign key waits for) gives up after stepTakeWait, and
// the members take their locks alone: the others are not held up until
// the delete ends.
func TestARowWaitInASessionGroupHoldsUpNoOtherTake(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	for _, id := range []string{"s1", "slow"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE tenant = $1 AND id = 'slow' FOR UPDATE`, a.tenant); err != nil {
		t.Fatal(err)
	}
	// The delete ends once the other take's lock is held, or after 5 s;
	// the rollback goes before the answer.
	heldMeanwhile := make(chan bool, 1)
	go func() {
		held := false
		for deadline := time.Now().Add(5 * time.Second); !held && time.Now().Before(deadline); {
			var n int
			held = a.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = $1 AND session_id = 's1'`, a.tenant).Scan(&n) == nil && n == 1
			time.Sleep(10 * time.Millisecond)
		}
		_ = tx.Rollback(ctx)
		heldMeanwhile <- held
	}()
	unlocks, errs, _, lead := lockSessionsTogether(t, dsn, a, c, []string{"slow", "s1"}, nil)
	lead()
	if !<-heldMeanwhile {
		t.Error("a session lock take grouped with one waiting for a session's row held by a delete waited for the delete too")
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("take %d: %v; want the lock", i, err)
			continue
		}
		unlocks[i]()
	}
}
