package storetest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// LeaseCases are the suite's cases for coordination.LeaseStore, the run
// lease, and coordination.StepLeaseStore, the leases of steps in flight; a
// store without one skips its cases. Run runs them as "Leases".
var LeaseCases = []Case{
	{"RunLeaseIsExclusiveAndEveryClaimAVersionOn", testLeaseExclusive},
	{"ExpiredRunLeaseIsClaimedAndItsHolderFenced", testLeaseExpired},
	{"LateHolderRenewsItsExpiredClaim", testLeaseLate},
	{"ClaimOverADeadRunCarriesItsRunTime", testLeaseRanBefore},
	{"LeaseFromAnotherHostIsGivenTheClockSkew", testLeaseSkew},
	{"UnclaimedRunReadsNoLease", testLeaseNone},
	{"RunsSessionEntriesAreFencedByItsLease", testLeasedEntries},
	{"DecisionsAreFencedByTheLogTheyRead", testReadFencedEntries},
	{"StepLeaseIsExclusivePerAgentAndReleased", testStepLeaseExclusive},
	{"ExpiredStepLeaseIsAbandonedClaimedAndItsHolderFenced", testStepLeaseExpired},
	{"ClaimOverADeadStepCarriesItsTime", testStepLeaseRanBefore},
	{"LateStepLeaseReadsAliveWhileItsStepLockIsHeld", testStepLeaseAlive},
}

func leases(t *testing.T, st coordination.Store) coordination.LeaseStore {
	t.Helper()
	ls, ok := st.(coordination.LeaseStore)
	if !ok {
		t.Skip("the store keeps no run leases")
	}
	create(t, st, "s")
	return ls
}

// owner is a holder in this very process, so that no store can find it
// dead before its expiry.
func owner(id string) coordination.LeaseOwner {
	return coordination.ThisProcess(id)
}

func readLease(t *testing.T, ls coordination.LeaseStore) *coordination.RunLease {
	t.Helper()
	l, err := ls.ReadRun(context.Background(), "s")
	if err != nil || l == nil {
		t.Fatalf("ReadRun = %v, %v; want the lease", l, err)
	}
	return l
}

func testLeaseExclusive(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	a, err := ls.AcquireRun(ctx, "s", owner("a"), time.Minute)
	if err != nil || a.Version != 1 || a.ID != "a" {
		t.Fatalf("first claim = %+v, %v; want version 1 owned by a", a, err)
	}
	if _, err := ls.AcquireRun(ctx, "s", owner("b"), time.Minute); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("second claim while held = %v, want ErrSessionRunning", err)
	}
	if l := readLease(t, ls); !l.Held(time.Now()) || l.ID != "a" || l.PID != os.Getpid() || l.Host != coordination.ThisHost() {
		t.Errorf("read while held = %+v, want a's live claim with its pid and host", l)
	}
	if err := ls.ReleaseRun(ctx, "s", a.Version); err != nil {
		t.Fatalf("release: %v", err)
	}
	if l := readLease(t, ls); !l.Released || l.Held(time.Now()) || l.Abandoned(time.Now()) || l.Version != 1 {
		t.Errorf("read after release = %+v, want released (not abandoned), version kept", l)
	}
	if err := ls.ReleaseRun(ctx, "s", a.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("second release = %v, want ErrLeaseLost", err)
	}
	b, err := ls.AcquireRun(ctx, "s", owner("b"), time.Minute)
	if err != nil || b.Version != 2 {
		t.Fatalf("claim after release = %+v, %v; want version 2", b, err)
	}
	if _, err := ls.RenewRun(ctx, "s", a.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("renewing a replaced claim = %v, want ErrLeaseLost", err)
	}
	r, err := ls.RenewRun(ctx, "s", b.Version, 2*time.Minute)
	if err != nil || !r.Expires.After(b.Expires) || r.Version != 2 {
		t.Errorf("renew = %+v, %v; want a later expiry, same version", r, err)
	}
}

func testLeaseExpired(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	a, err := ls.AcquireRun(ctx, "s", owner("a"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if l := readLease(t, ls); !l.Abandoned(time.Now()) {
		t.Fatalf("a lease past its expiry, never released = %+v; want abandoned", l)
	}
	b, err := ls.AcquireRun(ctx, "s", owner("b"), time.Minute)
	if err != nil || b.Version != a.Version+1 || b.ID != "b" {
		t.Fatalf("claim of an expired lease = %+v, %v; want b's, one version on", b, err)
	}
	if _, err := ls.RenewRun(ctx, "s", a.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the old holder's renew = %v, want ErrLeaseLost (fenced)", err)
	}
	if err := ls.ReleaseRun(ctx, "s", a.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the old holder's release = %v, want ErrLeaseLost", err)
	}
	if l := readLease(t, ls); l.ID != "b" || !l.Held(time.Now()) {
		t.Errorf("after the old holder's attempts = %+v, want b's live claim", l)
	}
}

func testLeaseLate(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	a, err := ls.AcquireRun(ctx, "s", owner("a"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	r, err := ls.RenewRun(ctx, "s", a.Version, time.Minute)
	if err != nil || r.Version != a.Version || !r.Held(time.Now()) {
		t.Fatalf("late renew = %+v, %v; want the same claim, held again", r, err)
	}
}

// testLeaseRanBefore: a claim that takes over an unreleased lease carries
// how long the runs before it ran (claim to last heartbeat, summed over a
// chain of them), so a run's timeout binds across the replicas that run
// it; a claim after a release starts from nothing.
func testLeaseRanBefore(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	a, err := ls.AcquireRun(ctx, "s", owner("a"), 20*time.Millisecond)
	if err != nil || a.RanBefore != 0 {
		t.Fatalf("first claim = %+v, %v; want nothing run before", a, err)
	}
	time.Sleep(120 * time.Millisecond)
	ra, err := ls.RenewRun(ctx, "s", a.Version, 20*time.Millisecond) // a ran ~120 ms
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // then died
	b, err := ls.AcquireRun(ctx, "s", owner("b"), 20*time.Millisecond)
	ranA := ra.Renewed.Sub(a.Claimed).Truncate(time.Millisecond)
	if err != nil || b.RanBefore < ranA-2*time.Millisecond || b.RanBefore > ranA+2*time.Millisecond {
		t.Fatalf("claim over a's dead run = %+v, %v; want a's %s carried", b, err, ranA)
	}
	if l := readLease(t, ls); l.RanBefore != b.RanBefore {
		t.Errorf("read back: ran before %s, want %s", l.RanBefore, b.RanBefore)
	}
	time.Sleep(80 * time.Millisecond)
	rb, err := ls.RenewRun(ctx, "s", b.Version, 20*time.Millisecond) // b ran ~80 ms
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	c, err := ls.AcquireRun(ctx, "s", owner("c"), time.Minute)
	want := b.RanBefore + rb.Renewed.Sub(b.Claimed)
	if err != nil || c.RanBefore < want-3*time.Millisecond || c.RanBefore > want+3*time.Millisecond {
		t.Fatalf("claim over b's dead run = %+v, %v; want a's and b's %s", c, err, want)
	}
	if err := ls.ReleaseRun(ctx, "s", c.Version); err != nil {
		t.Fatal(err)
	}
	d, err := ls.AcquireRun(ctx, "s", owner("d"), time.Minute)
	if err != nil || d.RanBefore != 0 {
		t.Errorf("claim after a release = %+v, %v; want nothing carried", d, err)
	}
}

func testLeaseSkew(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	far := coordination.LeaseOwner{ID: "far", Host: "another-host.invalid", PID: 1}
	if _, err := ls.AcquireRun(ctx, "s", far, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	// Expired by this clock, but within MaxClockSkew of it: another host's
	// clock may be behind ours.
	if _, err := ls.AcquireRun(ctx, "s", owner("b"), time.Minute); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("claim of another host's lease within the skew = %v, want ErrSessionRunning", err)
	}
	if l := readLease(t, ls); l.Abandoned(time.Now()) || !l.Abandoned(time.Now().Add(coordination.MaxClockSkew)) {
		t.Errorf("another host's lease = %+v: want held within the skew, abandoned past it", l)
	}
}

func testLeaseNone(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	if l, err := ls.ReadRun(ctx, "s"); l != nil || err != nil {
		t.Errorf("ReadRun of a never-run session = %+v, %v; want nil, nil", l, err)
	}
	if _, err := ls.ReadRun(ctx, "missing"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("ReadRun of an unknown session = %v, want ErrSessionNotFound", err)
	}
	if _, err := ls.AcquireRun(ctx, "missing", owner("a"), time.Minute); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("AcquireRun of an unknown session = %v, want ErrSessionNotFound", err)
	}
}

func stepLeases(t *testing.T, st coordination.Store) coordination.StepLeaseStore {
	t.Helper()
	ls, ok := st.(coordination.StepLeaseStore)
	if !ok {
		t.Skip("the store keeps no step leases")
	}
	create(t, st, "s")
	return ls
}

func readStep(t *testing.T, ls coordination.StepLeaseStore, agent string) *coordination.RunLease {
	t.Helper()
	all, err := ls.ReadSteps(context.Background(), "s")
	if err != nil || all[agent] == nil {
		t.Fatalf("ReadSteps = %v, %v; want %s's step lease", all, err, agent)
	}
	return all[agent]
}

func testStepLeaseExclusive(t *testing.T, st coordination.Store) {
	ls, ctx := stepLeases(t, st), context.Background()
	if all, err := ls.ReadSteps(ctx, "s"); len(all) != 0 || err != nil {
		t.Fatalf("ReadSteps before any step = %v, %v; want none", all, err)
	}
	a, err := ls.AcquireStep(ctx, "s", "agent_a", owner("a"), time.Minute)
	if err != nil || a.Version != 1 || a.ID != "a" {
		t.Fatalf("first claim = %+v, %v; want version 1 owned by a", a, err)
	}
	if _, err := ls.AcquireStep(ctx, "s", "agent_a", owner("b"), time.Minute); !errors.Is(err, coordination.ErrAgentBusy) {
		t.Fatalf("second claim of agent_a's step while held = %v, want ErrAgentBusy", err)
	}
	// Each agent has its own step lease, apart from the run lease.
	if o, err := ls.AcquireStep(ctx, "s", "agent_b", owner("b"), time.Minute); err != nil || o.Version != 1 {
		t.Fatalf("claim of agent_b's step = %+v, %v; want its own version 1", o, err)
	}
	if run, ok := st.(coordination.LeaseStore); ok {
		if l, err := run.ReadRun(ctx, "s"); l != nil || err != nil {
			t.Errorf("run lease after step claims = %+v, %v; want none", l, err)
		}
	}
	if l := readStep(t, ls, "agent_a"); !l.Held(time.Now()) || l.ID != "a" || l.PID != os.Getpid() {
		t.Errorf("read while held = %+v, want a's live claim", l)
	}
	if err := ls.ReleaseStep(ctx, "s", "agent_a", a.Version); err != nil {
		t.Fatalf("release: %v", err)
	}
	if l := readStep(t, ls, "agent_a"); !l.Released || l.Abandoned(time.Now()) || l.Version != 1 {
		t.Errorf("read after release = %+v, want released (not abandoned), version kept", l)
	}
	if err := ls.ReleaseStep(ctx, "s", "agent_a", a.Version); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("second release = %v, want ErrLeaseLost", err)
	}
	b, err := ls.AcquireStep(ctx, "s", "agent_a", owner("b"), time.Minute)
	if err != nil || b.Version != 2 {
		t.Fatalf("claim after release = %+v, %v; want version 2", b, err)
	}
	if _, err := ls.RenewStep(ctx, "s", "agent_a", a.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("renewing a replaced claim = %v, want ErrLeaseLost", err)
	}
	if _, err := ls.AcquireStep(ctx, "missing", "agent_a", owner("a"), time.Minute); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("AcquireStep of an unknown session = %v, want ErrSessionNotFound", err)
	}
}

func testStepLeaseExpired(t *testing.T, st coordination.Store) {
	ls, ctx := stepLeases(t, st), context.Background()
	a, err := ls.AcquireStep(ctx, "s", "agent_a", owner("a"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if l := readStep(t, ls, "agent_a"); !l.Abandoned(time.Now()) {
		t.Fatalf("a step lease past its expiry, never released = %+v; want abandoned", l)
	}
	b, err := ls.AcquireStep(ctx, "s", "agent_a", owner("b"), time.Minute)
	if err != nil || b.Version != a.Version+1 || b.ID != "b" {
		t.Fatalf("claim of an expired step lease = %+v, %v; want b's, one version on", b, err)
	}
	if _, err := ls.RenewStep(ctx, "s", "agent_a", a.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("the old holder's renew = %v, want ErrLeaseLost (fenced)", err)
	}
	if l := readStep(t, ls, "agent_a"); l.ID != "b" || !l.Held(time.Now()) {
		t.Errorf("after the old holder's renew = %+v, want b's live claim", l)
	}
}

// testStepLeaseRanBefore: a claim that takes over an agent's unreleased
// step lease (its holder died mid-step) carries how long that try ran, and
// when it was claimed, so the step's timeout binds across the replicas that
// try it; a claim after a release (the step landed or was given up), or
// over the claimant's own lease, carries nothing. Every claim over an
// unreleased lease, the claimant's own too, goes on with that lease's run
// of claims (ChainFrom, stored), whose tool calls the step counts; a
// claim after a release begins a run of its own.
func testStepLeaseRanBefore(t *testing.T, st coordination.Store) {
	ls, ctx := stepLeases(t, st), context.Background()
	a, err := ls.AcquireStep(ctx, "s", "agent_a", owner("a"), 20*time.Millisecond)
	if err != nil || a.RanBefore != 0 || a.ChainFrom != a.Version {
		t.Fatalf("first claim = %+v, %v; want nothing run before, a run of claims of its own", a, err)
	}
	time.Sleep(100 * time.Millisecond)
	ra, err := ls.RenewStep(ctx, "s", "agent_a", a.Version, 20*time.Millisecond) // a tried ~100 ms
	if err != nil || ra.ChainFrom != a.Version {
		t.Fatalf("renewal = %+v, %v; want its run of claims kept", ra, err)
	}
	time.Sleep(60 * time.Millisecond) // then died
	b, err := ls.AcquireStep(ctx, "s", "agent_a", owner("b"), time.Minute)
	ranA := ra.Renewed.Sub(a.Claimed).Truncate(time.Millisecond)
	if err != nil || b.RanBefore < ranA-2*time.Millisecond || b.RanBefore > ranA+2*time.Millisecond {
		t.Fatalf("claim over a's dead step = %+v, %v; want a's %s carried", b, err, ranA)
	}
	if d := b.CarriedFrom.Sub(a.Claimed); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("claim over a's dead step carried from %v; want a's claim, %v", b.CarriedFrom, a.Claimed)
	}
	if b.ChainFrom != a.Version {
		t.Errorf("claim over a's dead step: its run of claims from version %d; want a's, %d", b.ChainFrom, a.Version)
	}
	if l := readStep(t, ls, "agent_a"); l.RanBefore != b.RanBefore || l.ChainFrom != a.Version {
		t.Errorf("read back: ran before %s, its run of claims from %d; want %s, from %d", l.RanBefore, l.ChainFrom, b.RanBefore, a.Version)
	}
	if o, err := ls.AcquireStep(ctx, "s", "agent_b", owner("b"), time.Minute); err != nil || o.RanBefore != 0 || o.ChainFrom != o.Version {
		t.Errorf("another agent's first claim = %+v, %v; want nothing carried", o, err)
	}
	if err := ls.ReleaseStep(ctx, "s", "agent_a", b.Version); err != nil {
		t.Fatal(err)
	}
	c, err := ls.AcquireStep(ctx, "s", "agent_a", owner("c"), 20*time.Millisecond)
	if err != nil || c.RanBefore != 0 || !c.CarriedFrom.IsZero() || c.ChainFrom != c.Version {
		t.Errorf("claim after a release = %+v, %v; want nothing carried, a run of claims of its own", c, err)
	}
	time.Sleep(60 * time.Millisecond) // c's try given up, its release lost
	if c2, err := ls.AcquireStep(ctx, "s", "agent_a", owner("c"), time.Minute); err != nil || c2.RanBefore != 0 || c2.ChainFrom != c.Version {
		t.Errorf("c's claim over its own unreleased step = %+v, %v; want nothing carried (no process of it died), c's run of claims (from %d) going on", c2, err, c.Version)
	}
	d, err := ls.AcquireStep(ctx, "s", "agent_c", owner("d"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := ls.RenewStep(ctx, "s", "agent_c", d.Version, 20*time.Millisecond); err != nil { // d tried ~50 ms
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // then died
	e, err := ls.AcquireStep(ctx, "s", "agent_c", owner("e"), 20*time.Millisecond)
	if err != nil || e.RanBefore == 0 {
		t.Fatalf("claim over d's dead step = %+v, %v; want d's time carried", e, err)
	}
	time.Sleep(60 * time.Millisecond) // e's try given up, its release lost
	if e2, err := ls.AcquireStep(ctx, "s", "agent_c", owner("e"), time.Minute); err != nil || e2.RanBefore != e.RanBefore || e.ChainFrom != d.Version || e2.ChainFrom != d.Version {
		t.Errorf("e's claim over its own unreleased step = %+v, %v (e's run of claims from %d); want what it carried from d, %s, and none of its own, and d's run of claims (from %d) going on",
			e2, err, e.ChainFrom, e.RanBefore, d.Version)
	}
	if l := readStep(t, ls, "agent_c"); l.ChainFrom != d.Version {
		t.Errorf("read back: its run of claims from %d; want d's, %d", l.ChainFrom, d.Version)
	}
}

// A reader knows a step alive past its lease's expiry while its holder here
// holds the agent's step lock (a late heartbeat on a loaded machine); once
// the lock is gone the expiry decides.
func testStepLeaseAlive(t *testing.T, st coordination.Store) {
	ls, ctx := stepLeases(t, st), context.Background()
	lock, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.AcquireStep(ctx, "s", "agent_a", owner("a"), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if l := readStep(t, ls, "agent_a"); l.Abandoned(time.Now()) {
		t.Errorf("an expired step lease whose holder holds the step lock = %+v; want alive, not abandoned", l)
	}
	lock.Release()
	if l := readStep(t, ls, "agent_a"); !l.Abandoned(time.Now()) {
		t.Errorf("an expired step lease after its step lock was released = %+v; want abandoned", l)
	}
}
