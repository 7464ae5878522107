package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A server step's landing counts the session's cancels in its own
// transaction (massgen_hold_uncancelled): the ledger loan the service read
// them from, under the session lock before the landing, is gone.

// TestALeasedLandingAfterACancelWritesNothing: a cancel recorded since the
// step began refuses its landing, in the same round trip (and one more to
// roll its transaction back), with the words
// and errors of coordination's cancel fence (ErrNotNext); nothing is
// written, the step's lease and lock stay held, as a refused landing
// leaves them. Counted with the cancel, the same lock then lands.
func TestALeasedLandingAfterACancelWritesNothing(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, lease := leasedStep(t, a)
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	before := c.Count()
	_, released, err := l.LandLeased(ctx, newAnswer("agent_a", "after the cancel"), lease.Version, 0)
	// The refusal and the rollback of the transaction it left open (a
	// landing commits before it notifies: commitThenNotify).
	if n := c.Count() - before; n != 2 {
		t.Errorf("a refused landing took %d round trips, want 2", n)
	}
	if !errors.Is(err, coordination.ErrNotNext) || errors.Is(err, coordination.ErrLeaseLost) || released {
		t.Fatalf("a landing after a cancel = %v (released %v); want ErrNotNext, nothing released", err, released)
	}
	if want := coordination.CancelledMidStep("s", "agent_a", 1).Error(); err.Error() != want {
		t.Errorf("the refusal says %q; want the cancel fence's words %q", err, want)
	}
	if n := rows(t, a, "entries"); n != 0 {
		t.Errorf("%d entries stored by a step cancelled in flight, want 0", n)
	}
	if n := rows(t, a, "usage"); n != 0 {
		t.Errorf("%d usage rows stored by a step cancelled in flight, want 0", n)
	}
	if tok := stepLockToken(t, a); tok != l.(*stepLock).token {
		t.Errorf("the refused landing's lock row is %q; want it still held (%s)", tok, l.(*stepLock).token)
	}
	if now := stepLease(t, a); now == nil || now.Version != lease.Version || now.Released {
		t.Errorf("the lease after the refused landing: %+v; want claim %d still held", now, lease.Version)
	}

	got, released, err := l.LandLeased(ctx, newAnswer("agent_a", "counted with the cancel"), lease.Version, 1)
	if err != nil {
		t.Fatalf("a landing that began after the cancel: %v", err)
	}
	if got.Step != 1 {
		t.Errorf("the landing is step %d; want step 1", got.Step)
	}
	// The refusal forgot the lease row it knew (as every failed landing
	// does): this landing leaves the release to the caller.
	if now := stepLease(t, a); !released && (now == nil || now.Version != lease.Version || now.Released) {
		t.Errorf("the lease after a landing that left its release: %+v; want claim %d still held", now, lease.Version)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Errorf("%d entries after the landing, want 1", n)
	}
}

// TestAServerStepReadsItsSessionTwice: a run's step lands through
// LandLeased, which counts the cancels itself: the step derives its session
// twice (under its step lock, after it lands), the loan before the landing
// gone. Each loan is a round trip.
func TestAServerStepReadsItsSessionTwice(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	before := c.Count()
	_, steps := runSim(t, svc, c)
	loans, inFlight := sessionReads(c)
	t.Logf("%d steps: %d loans, %d in-flight reads alone, %d round trips in all (with the session's creation)", steps, loans, inFlight, c.Count()-before)
	// Four for the run, and one more each time the run's watch hears a
	// session entry (its own re-vote or end): a few.
	if most := int64(2*steps + 6); loans+inFlight > most {
		t.Errorf("%d steps read the session in %d round trips, want at most %d (two a step, a few for the run)", steps, loans+inFlight, most)
	}
}

// TestACancelledStepWhoseLeaseWasClaimedIsRefusedAsCancelled: a session
// cancelled while a step was in flight, and resumed on another replica
// whose run claimed the step's lease, refuses the step as cancelled
// (ErrNotNext: resume, and the model's spend is recorded), not as a lost
// lease.
func TestACancelledStepWhoseLeaseWasClaimedIsRefusedAsCancelled(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	l, lease := leasedStep(t, a)
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled, Time: time.Now(), Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET expires_at = now() - interval '1 hour' WHERE tenant = $1`, a.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("resumed"), time.Minute); err != nil {
		t.Fatal(err)
	}
	_, released, err := l.LandLeased(ctx, newAnswer("agent_a", "late"), lease.Version, 0)
	if !errors.Is(err, coordination.ErrNotNext) || errors.Is(err, coordination.ErrLeaseLost) || released {
		t.Fatalf("a cancelled step whose lease was claimed since = %v (released %v); want the cancel's refusal (ErrNotNext), not a lost lease", err, released)
	}
}
