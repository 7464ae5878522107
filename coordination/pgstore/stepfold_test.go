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

// TestALeaseClaimedWithItsLockIsOneRoundTrip: the lock and the claim of a
// row not known (an agent's first step) and of a known one (its next) are
// one round trip each, the claim as AcquireStep's: one version on, and
// the row known after it.
func TestALeaseClaimedWithItsLockIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 2; want++ {
		before := c.Count()
		l, lease, err := a.LockStepWithLease(ctx, "s", "agent_a", coordination.ThisProcess("test"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Count() - before; n != 1 {
			t.Errorf("claim %d: the lock with its lease took %d round trips, want 1", want, n)
		}
		if lease == nil || lease.Version != want {
			t.Fatalf("claim %d: the lease claimed with the lock is %+v; want version %d", want, lease, want)
		}
		if got := stepLease(t, a); got == nil || got.Version != want || got.Released {
			t.Errorf("claim %d: the stored lease is %+v; want version %d, unreleased", want, got, want)
		}
		if err := a.ReleaseStep(ctx, "s", "agent_a", want); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
}

// TestABusyStepLockClaimsNoLease: a take refused by a live holder writes
// no claim, though the row is known and its rule would take it; and a
// known row another replica moved on is left to AcquireStep, the lock
// held.
func TestABusyStepLockClaimsNoLease(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	l, lease, err := a.LockStepWithLease(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute)
	if err != nil || lease == nil {
		t.Fatalf("the first take with its lease = %v, %+v", err, lease)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", lease.Version); err != nil {
		t.Fatal(err)
	}
	// The lock is still held: another take, even by the replica that
	// knows the released row, claims nothing.
	if _, got, err := a.LockStepWithLease(ctx, "s", "agent_a", coordination.ThisProcess("a2"), time.Minute); !errors.Is(err, coordination.ErrAgentBusy) || got != nil {
		t.Errorf("a take of a held lock = %+v, %v; want ErrAgentBusy and no lease", got, err)
	}
	if got := stepLease(t, a); got.Version != lease.Version || !got.Released {
		t.Errorf("after a busy take the lease is %+v; want version %d still released", got, lease.Version)
	}
	l.Release()

	// Another replica claims and releases the lease: a's known row is
	// stale, so its take claims nothing and AcquireStep decides.
	other, err := b.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("b"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseStep(ctx, "s", "agent_a", other.Version); err != nil {
		t.Fatal(err)
	}
	l, got, err := a.LockStepWithLease(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute)
	if err != nil || got != nil {
		t.Fatalf("a take over a row moved on = %+v, %v; want the lock and no lease", got, err)
	}
	defer l.Release()
	next, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("a"), time.Minute)
	if err != nil || next.Version != other.Version+1 {
		t.Errorf("AcquireStep after it = %+v, %v; want version %d", next, err, other.Version+1)
	}
	// A row held by another replica, not known here: not claimed with the
	// lock, and AcquireStep refuses it as today.
	if _, got, err := b.LockStepWithLease(ctx, "s", "agent_b", coordination.ThisProcess("b"), time.Minute); err != nil || got == nil {
		t.Fatalf("b's take of agent_b = %+v, %v", got, err)
	}
}

// TestAStepNotDueReleasesTheLeaseClaimedWithItsLock: a server step refused
// because its agent is not due lets the lease claimed with its lock go,
// released, and the lock with it.
func TestAStepNotDueReleasesTheLeaseClaimedWithItsLock(t *testing.T) {
	a, svc, s := answeredStepSession(t)
	ctx := context.Background()
	const agent = "agent_a"
	// Its answer given, the agent waits for its peer's.
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("a second step before the peer's = %v; want ErrNotNext", err)
	}
	all, err := a.ReadSteps(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l := all[agent]; l == nil || !l.Released || l.Alive {
		t.Errorf("after a step refused as not due the lease is %+v; want it released", l)
	}
	held, err := a.InFlight(ctx, s.ID)
	if err != nil || len(held) != 0 {
		t.Errorf("after a step refused as not due the locks held are %v, %v; want none", held, err)
	}
}

// answeredStepSession is a step-driven session of two sims on a replica
// of its own schema, agent_a's first answer given through svc.
func answeredStepSession(t *testing.T) (*Store, *coordination.Service, *coordination.Session) {
	t.Helper()
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	seed := int64(7)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"}, Seed: &seed, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	return a, svc, s
}
