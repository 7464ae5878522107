package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// roundTrips runs fn and says how many round trips c counted meanwhile.
func roundTrips(c *RoundTrips, fn func()) int64 {
	before := c.Count()
	fn()
	return c.Count() - before
}

// TestAStepsLeaseIsClaimedAndReleasedInOneRoundTripEach: the lease row a
// replica wrote last is changed by one conditional UPDATE: the next step's
// claim of the lease it released, and the release of the claim it made
// (renewed meanwhile or not). The first claim inserts the row, in one
// round trip too. The run lease goes the same way.
func TestAStepsLeaseIsClaimedAndReleasedInOneRoundTripEach(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	owner := coordination.ThisProcess("test")
	var l coordination.RunLease
	var err error
	if n := roundTrips(c, func() { l, err = a.AcquireStep(ctx, "s", "agent_a", owner, time.Minute) }); err != nil || n != 1 {
		t.Fatalf("the first claim: %v in %d round trips, want 1", err, n)
	}
	for step := range 3 {
		if n := roundTrips(c, func() { err = a.ReleaseStep(ctx, "s", "agent_a", l.Version) }); err != nil || n != 1 {
			t.Errorf("step %d's release: %v in %d round trips, want 1", step, err, n)
		}
		prev := l.Version
		if n := roundTrips(c, func() { l, err = a.AcquireStep(ctx, "s", "agent_a", owner, time.Minute) }); err != nil || n != 1 {
			t.Errorf("step %d's claim: %v in %d round trips, want 1", step+1, err, n)
		}
		if l.Version != prev+1 || l.Released {
			t.Fatalf("the claim after a release: %+v, want version %d, held", l, prev+1)
		}
		all, err := a.ReadSteps(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if got := all["agent_a"]; got == nil || got.Version != l.Version || got.Released || got.ID != "test" || !got.Expires.Equal(l.Expires.Truncate(time.Microsecond)) {
			t.Fatalf("the stored lease %+v, want %+v", got, l)
		}
	}
	// A renewal (the heartbeat's, in its own transaction) keeps the row
	// known: the release after it is still one round trip.
	if l, err = a.RenewStep(ctx, "s", "agent_a", l.Version, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := roundTrips(c, func() { err = a.ReleaseStep(ctx, "s", "agent_a", l.Version) }); err != nil || n != 1 {
		t.Errorf("the release after a renewal: %v in %d round trips, want 1", err, n)
	}
	all, err := a.ReadSteps(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := all["agent_a"]; got == nil || got.Version != l.Version || !got.Released {
		t.Fatalf("the stored lease after the release: %+v, want version %d released", got, l.Version)
	}

	if n := roundTrips(c, func() { l, err = a.AcquireRun(ctx, "s", owner, time.Minute) }); err != nil || n != 1 {
		t.Fatalf("the first run claim: %v in %d round trips, want 1", err, n)
	}
	if n := roundTrips(c, func() { err = a.ReleaseRun(ctx, "s", l.Version) }); err != nil || n != 1 {
		t.Errorf("the run's release: %v in %d round trips, want 1", err, n)
	}
	if n := roundTrips(c, func() { l, err = a.AcquireRun(ctx, "s", owner, time.Minute) }); err != nil || n != 1 || l.Version != 2 {
		t.Errorf("the run claimed again: version %d, %v in %d round trips, want version 2 in 1", l.Version, err, n)
	}
}

// TestAKnownLeaseRowThatMovedOnIsReadAgain: what a replica wrote last is
// only a guess; once another replica changed the row, the conditional
// UPDATE lands nothing and the locked path decides. A live claim of
// another replica is refused, never taken over; a holder whose expired
// claim was taken over can neither renew nor release it (fenced).
func TestAKnownLeaseRowThatMovedOnIsReadAgain(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &RoundTrips{}
	a := countedReplica(t, dsn, c)
	b := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	ownerA, ownerB := coordination.ThisProcess("a"), coordination.ThisProcess("b")
	l1, err := a.AcquireStep(ctx, "s", "agent_a", ownerA, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", l1.Version); err != nil {
		t.Fatal(err)
	}
	l2, err := b.AcquireStep(ctx, "s", "agent_a", ownerB, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// a knows the row it released; b's live claim stands there now.
	if n := roundTrips(c, func() { _, err = a.AcquireStep(ctx, "s", "agent_a", ownerA, time.Minute) }); !errors.Is(err, coordination.ErrAgentBusy) || n != 3 {
		t.Errorf("claiming over another replica's live claim = %v in %d round trips; want ErrAgentBusy in 3 (the UPDATE missed, then the locked path)", err, n)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", l1.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("releasing a claim released and claimed again since = %v, want ErrLeaseLost", err)
	}
	if err := b.ReleaseStep(ctx, "s", "agent_a", l2.Version); err != nil {
		t.Fatal(err)
	}

	// a claims for a moment and stalls; b takes the expired claim over.
	l3, err := a.AcquireStep(ctx, "s", "agent_a", ownerA, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	l4, err := b.AcquireStep(ctx, "s", "agent_a", ownerB, time.Minute)
	if err != nil || l4.Version != l3.Version+1 {
		t.Fatalf("b's claim of a's expired one = %+v, %v; want version %d", l4, err, l3.Version+1)
	}
	// a still knows its own claim as it wrote it: the UPDATE over it
	// misses, and the locked path says the claim was lost.
	if err := a.ReleaseStep(ctx, "s", "agent_a", l3.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the stalled holder's release = %v, want ErrLeaseLost", err)
	}
	if _, err := a.RenewStep(ctx, "s", "agent_a", l3.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the stalled holder's renewal = %v, want ErrLeaseLost", err)
	}
	all, err := a.ReadSteps(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := all["agent_a"]; got == nil || got.Version != l4.Version || got.ID != "b" || got.Released {
		t.Fatalf("the stored lease %+v, want b's claim %d, held", got, l4.Version)
	}
}

// TestAClaimOfARowAnotherReplicaWroteIsTwoRoundTrips: a row this replica
// does not know is read with the insert that finds it there, and written
// over as read (a run taken over, a step-driven session's steps through
// another replica): two round trips, as the locked transaction was. A live
// claim there is refused by the read alone; a session that is not stored
// is not found.
func TestAClaimOfARowAnotherReplicaWroteIsTwoRoundTrips(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	c := &RoundTrips{}
	b := countedReplica(t, dsn, c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	ownerA, ownerB := coordination.ThisProcess("a"), coordination.ThisProcess("b")
	la, err := a.AcquireStep(ctx, "s", "agent_a", ownerA, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if n := roundTrips(c, func() { _, err = b.AcquireStep(ctx, "s", "agent_a", ownerB, time.Minute) }); !errors.Is(err, coordination.ErrAgentBusy) || n != 1 {
		t.Errorf("claiming over another replica's live claim = %v in %d round trips, want ErrAgentBusy in 1", err, n)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", la.Version); err != nil {
		t.Fatal(err)
	}
	var lb coordination.RunLease
	if n := roundTrips(c, func() { lb, err = b.AcquireStep(ctx, "s", "agent_a", ownerB, time.Minute) }); err != nil || n != 2 {
		t.Errorf("claiming the row another replica released: %v in %d round trips, want 2", err, n)
	}
	if lb.Version != la.Version+1 || lb.ID != "b" {
		t.Errorf("the claim %+v, want b's at version %d", lb, la.Version+1)
	}
	if n := roundTrips(c, func() { err = b.ReleaseStep(ctx, "s", "agent_a", lb.Version) }); err != nil || n != 1 {
		t.Errorf("releasing it: %v in %d round trips, want 1", err, n)
	}
	if _, err := b.AcquireStep(ctx, "missing", "agent_a", ownerB, time.Minute); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("claiming in a missing session = %v, want ErrSessionNotFound", err)
	}
	var n int
	if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM leases WHERE session_id = 'missing'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d lease rows of the missing session (%v), want none", n, err)
	}
}

// TestARefusalOfAKnownRowIsReadAgain: a rule that refuses the row as
// known refuses nothing yet, the row may have moved on: here a's own claim,
// released since by another replica, is claimed again.
func TestARefusalOfAKnownRowIsReadAgain(t *testing.T) {
	a, b := replicasSharing(t, "s")
	ctx := context.Background()
	owner := coordination.ThisProcess("a")
	l, err := a.AcquireStep(ctx, "s", "agent_a", owner, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseStep(ctx, "s", "agent_a", l.Version); err != nil {
		t.Fatal(err)
	}
	again, err := a.AcquireStep(ctx, "s", "agent_a", owner, time.Minute)
	if err != nil || again.Version != l.Version+1 {
		t.Fatalf("claiming a lease released through another replica = %+v, %v; want version %d", again, err, l.Version+1)
	}
}

// TestAKnownRowOfADeletedSessionIsNotFound: the row goes with its session
// (ON DELETE CASCADE), so the UPDATE over it lands nothing and the locked
// path finds no session.
func TestAKnownRowOfADeletedSessionIsNotFound(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `DELETE FROM sessions WHERE tenant = $1 AND id = 's'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", l.Version); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("releasing in a deleted session = %v, want ErrSessionNotFound", err)
	}
	if _, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("claiming in a deleted session = %v, want ErrSessionNotFound", err)
	}
	var n int
	if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM leases WHERE tenant = $1`, a.tenant).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d lease rows left (%v), want none", n, err)
	}
}

// TestTwoClaimsOfOneKnownRowAtOnceOneWins: two claims on one replica, both
// applying the rule to the row it released, race 100 times; the UPDATE
// lands for one, the other finds the row moved on and is told the agent is
// busy.
func TestTwoClaimsOfOneKnownRowAtOnceOneWins(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 100 {
		if err := a.ReleaseStep(ctx, "s", "agent_a", l.Version); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := make([]coordination.RunLease, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute)
			}()
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won < 0:
				won = i
			case err == nil:
				t.Fatalf("round %d: both claims won (%+v)", round, got)
			case !errors.Is(err, coordination.ErrAgentBusy):
				t.Fatalf("round %d: claim %d = %v, want ErrAgentBusy", round, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no claim won (%v)", round, errs)
		}
		if got[won].Version != l.Version+1 {
			t.Fatalf("round %d: the winner's version %d, want %d", round, got[won].Version, l.Version+1)
		}
		l = got[won]
	}
}

// TestTheKnownLeaseRowsAreBounded: a replica that runs for weeks keeps at
// most writtenMax rows; one let go costs its lease a locked change, once.
func TestTheKnownLeaseRowsAreBounded(t *testing.T) {
	var w written
	for i := range writtenMax + 100 {
		w.put("t", fmt.Sprint("s", i), "agent_a", coordination.RunLease{Version: 1})
	}
	if n := len(w.rows); n != writtenMax {
		t.Errorf("%d rows kept, want %d", n, writtenMax)
	}
	last := fmt.Sprint("s", writtenMax+99)
	if l, ok := w.get("t", last, "agent_a"); !ok || l.Version != 1 {
		t.Errorf("the row put last is not kept: %+v, %v", l, ok)
	}
	w.note("t", last, "agent_a", coordination.RunLease{}, errors.New("refused"))
	if _, ok := w.get("t", last, "agent_a"); ok {
		t.Error("a failed change left its row known")
	}
}

// TestAKnownRowChangedElsewhereInItsTimesOnlyIsReadAgain: a renewal or a
// release made through another replica leaves the version alone and moves
// only the times or the released mark. The known-row write compares every
// column, so a's remembered claim, expired by its own clock, is not taken
// over while b has renewed it, and a release b made is not made again.
func TestAKnownRowChangedElsewhereInItsTimesOnlyIsReadAgain(t *testing.T) {
	a, b := replicasSharing(t, "s")
	ctx := context.Background()
	l, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a"), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.RenewStep(ctx, "s", "agent_a", l.Version, time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a's remembered row has expired
	if got, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a2"), time.Minute); !errors.Is(err, coordination.ErrAgentBusy) {
		t.Fatalf("a claim over a lease renewed elsewhere = %+v, %v; want ErrAgentBusy", got, err)
	}

	run, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseRun(ctx, "s", run.Version); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseRun(ctx, "s", run.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("releasing again a run lease released elsewhere = %v, want ErrLeaseLost", err)
	}
}
