package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A server step's landing is fenced by its step lease and releases it in
// the append's own transaction (coordination.LeasedLanding): the lease's
// read before the landing and its release after it are gone.

// leasedStep is agent_a's step lock and step lease in session s of st.
func leasedStep(t *testing.T, st *Store) (coordination.LeasedLanding, coordination.RunLease) {
	t.Helper()
	ctx := context.Background()
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Release)
	lease, err := st.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("test"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return l.(coordination.LeasedLanding), lease
}

// stepLease is agent_a's step lease in session s as stored.
func stepLease(t *testing.T, st *Store) *coordination.RunLease {
	t.Helper()
	all, err := st.ReadSteps(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	return all["agent_a"]
}

// TestALeasedLandingIsOneRoundTrip: the lease's fence, the append and the
// lease's release, three round trips before, are one; the lease is
// released as ReleaseStep releases it, the lock let go, and the released
// row is known (the next claim is one round trip).
func TestALeasedLandingIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, _ := leasedStep(t, a) // the statements are prepared once
	if _, _, err := l.LandLeased(ctx, newAnswer("agent_a", "warm"), stepLease(t, a).Version, 0); err != nil {
		t.Fatal(err)
	}
	l, lease := leasedStep(t, a)
	before := c.Count()
	start := time.Now()
	got, released, err := l.LandLeased(ctx, newAnswer("agent_a", "counted"), lease.Version, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("a leased landing took %d round trips, want 1", n)
	}
	if !released {
		t.Error("a leased landing over the row it knows did not release the lease")
	}
	if got.Step != 2 || got.AnswerNum != 2 {
		t.Errorf("the landed entry is step %d, answer %d; want 2 and 2", got.Step, got.AnswerNum)
	}
	now := stepLease(t, a)
	switch {
	case now == nil || !now.Released || now.Version != lease.Version:
		t.Errorf("the lease after its landing: %+v; want claim %d released", now, lease.Version)
	case now.Renewed.Before(start.Truncate(time.Microsecond)) || !now.Expires.Equal(now.Renewed):
		t.Errorf("the released lease was renewed %v, expires %v; want both the release's time (ReleaseStepLease)", now.Renewed, now.Expires)
	}
	if tok := stepLockToken(t, a); tok != "" {
		t.Errorf("after the leased landing the step lock's row is still there (%s)", tok)
	}
	before = c.Count()
	if _, err := a.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("test"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("the next claim took %d round trips, want 1 (the released row known)", n)
	}
}

// TestALeasedLandingWithoutItsLeaseWritesNothing: a lease claimed again by
// another replica (its expiry passed), or released, refuses the landing in
// its own transaction with ErrLeaseLost in the fence's words; nothing is
// written, the lock stays held, and the other replica's lease is
// untouched.
func TestALeasedLandingWithoutItsLeaseWritesNothing(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	l, lease := leasedStep(t, a)
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET expires_at = now() - interval '1 hour' WHERE tenant = $1 AND session_id = 's' AND agent_id = 'agent_a'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	theirs, err := b.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("other"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, released, err := l.LandLeased(ctx, newAnswer("agent_a", "too late"), lease.Version, 0)
	if !errors.Is(err, coordination.ErrLeaseLost) || released {
		t.Fatalf("a landing whose lease another replica claimed = %v (released %v); want ErrLeaseLost", err, released)
	}
	if want := coordination.StepLeaseLost("s", "agent_a").Error(); err.Error() != want {
		t.Errorf("the refusal says %q; want the fence's words %q", err, want)
	}
	if n := rows(t, a, "entries"); n != 0 {
		t.Errorf("%d entries stored by a step whose lease was lost, want 0", n)
	}
	if n := rows(t, a, "usage"); n != 0 {
		t.Errorf("%d usage rows stored by a step whose lease was lost, want 0", n)
	}
	if tok := stepLockToken(t, a); tok != l.(*stepLock).token {
		t.Errorf("the refused landing's lock row is %q; want it still held (%s)", tok, l.(*stepLock).token)
	}
	if now := stepLease(t, a); now == nil || now.Version != theirs.Version || now.Released || now.ID != "other" {
		t.Errorf("the other replica's lease after the refused landing: %+v; want its claim %d untouched", now, theirs.Version)
	}

	// Released (by a release that raced the landing): refused alike.
	if err := b.ReleaseStep(ctx, "s", "agent_a", theirs.Version); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.LandLeased(ctx, newAnswer("agent_a", "released"), theirs.Version, 0); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("a landing whose lease was released = %v; want ErrLeaseLost", err)
	}
	if n := rows(t, a, "entries"); n != 0 {
		t.Errorf("%d entries stored by a step whose lease was released, want 0", n)
	}
}

// TestALeasedLandingOverAStaleKnownRowLandsAndLeavesTheRelease: a lease row
// changed behind this replica's back but still the claim's (the fence
// holds) lands the step; the known row's UPDATE misses, so the lease is
// left held, released false, for the caller's ReleaseStep.
func TestALeasedLandingOverAStaleKnownRowLandsAndLeavesTheRelease(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, lease := leasedStep(t, a)
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET renewed_at = renewed_at + interval '1 second' WHERE tenant = $1 AND session_id = 's' AND agent_id = 'agent_a'`, a.tenant); err != nil {
		t.Fatal(err)
	}
	_, released, err := l.LandLeased(ctx, newAnswer("agent_a", "landed"), lease.Version, 0)
	if err != nil {
		t.Fatalf("a landing whose lease is held, its known row stale: %v; want it landed", err)
	}
	if released {
		t.Error("a landing whose known lease row was stale says it released the lease")
	}
	if now := stepLease(t, a); now == nil || now.Released {
		t.Errorf("the lease after a landing that could not release it: %+v; want it still held", now)
	}
	if err := a.ReleaseStep(ctx, "s", "agent_a", lease.Version); err != nil {
		t.Errorf("releasing the lease after the landing: %v", err)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Errorf("%d entries stored, want 1", n)
	}
}

// TestALeasedLandingLostAtItsCommitIsFoundOnRetry: a leased landing whose
// connection was cut after its commit (the step landed, the lease released
// by it) is unavailable; its retry is refused by the lease fence (released)
// yet finds the identical stored entry, that very landing: success, with
// no lease left to release.
func TestALeasedLandingLostAtItsCommitIsFoundOnRetry(t *testing.T) {
	a, cut := cutAtCommit(t, "landed once")
	landed := func() bool { return rows(t, a, "entries") > 0 }
	ctx := context.Background()
	l, lease := leasedStep(t, cut)
	e := newAnswer("agent_a", "landed once")
	e.Time = time.Now() // as the service sets it, once for every try
	if _, _, err := l.LandLeased(ctx, e, lease.Version, 0); !unavailable(err) {
		t.Fatalf("LandLeased over a connection lost after its commit = %v; want the database unavailable", err)
	}
	if !landed() {
		t.Fatal("the cut landing did not commit, which tests nothing")
	}
	if now := stepLease(t, a); now == nil || !now.Released {
		t.Fatalf("the cut landing's lease: %+v; want it released by the commit", now)
	}
	got, released, err := l.LandLeased(ctx, e, lease.Version, 0)
	if err != nil {
		t.Fatalf("the retry of a leased landing lost at its commit: %v; want the stored entry found, not the lease lost", err)
	}
	if !released {
		t.Error("the retry says the lease is still to release; its first landing released it")
	}
	if got.Step != 1 || got.AnswerNum != 1 {
		t.Errorf("the retry returned step %d, answer %d; want 1 and 1", got.Step, got.AnswerNum)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Errorf("%d entries stored, want 1", n)
	}

	// Another step's entry where the retry looks is not its landing: the
	// lease fence's refusal stands.
	l2, lease2 := leasedStep(t, cut)
	if err := cut.ReleaseStep(ctx, "s", "agent_a", lease2.Version); err != nil {
		t.Fatal(err)
	}
	l2.(*stepLock).tried = true
	if _, _, err := l2.LandLeased(ctx, newAnswer("agent_a", "never landed"), lease2.Version, 0); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("a retried landing whose lease was released and whose entry is not stored = %v; want ErrLeaseLost", err)
	}
}

// TestAServerStepNeitherReadsNorReleasesItsLeaseAlone: a run's steps land
// through LandLeased: no step lease is read (the landing's fence was
// ReadSteps) and a step's lease is changed alone at most once, its claim
// (its release was a second UPDATE), every lease released at the end.
func TestAServerStepNeitherReadsNorReleasesItsLeaseAlone(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	id, steps := runSim(t, svc, c)
	reads, changes := leaseQueries(c)
	t.Logf("%d steps: %d lease reads, %d lease rows changed alone", steps, reads, changes)
	if reads != 0 {
		t.Errorf("%d steps read the step leases %d times; want none (fenced in the landing)", steps, reads)
	}
	// The first claim of each agent's lease inserts its row; the run's
	// release is one.
	if changes > int64(steps) {
		t.Errorf("%d steps changed a lease row alone %d times; want at most one a step (the claim)", steps, changes)
	}
	all, err := a.ReadSteps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for agent, l := range all {
		if !l.Released {
			t.Errorf("%s's step lease after the run: %+v; want it released", agent, l)
		}
	}
}

// TestAStepsHeartbeatDoesNotTakeItsOwnReleaseForALoss: a heartbeat beating
// every millisecond, falling around the landings, never renews a lease its
// own landing released, which it would take for one another process
// claimed.
func TestAStepsHeartbeatDoesNotTakeItsOwnReleaseForALoss(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	logs := &coordtest.SyncBuffer{}
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1,
		Logger: zerolog.New(logs), RunHeartbeat: time.Millisecond, RunLeaseTTL: time.Minute})
	for i := 0; i < 3; i++ {
		runSim(t, svc, nil)
	}
	if strings.Contains(logs.String(), "claimed by another process") {
		t.Errorf("a step's heartbeat reported its lease lost:\n%s", logs.String())
	}
}

// runSim runs a session of four simulated agents to its end, c's counts
// (if any) reset after its creation; its id and steps.
func runSim(t *testing.T, svc *coordination.Service, c *QueryCounts) (string, int) {
	t.Helper()
	ctx := context.Background()
	seed := int64(7)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim", "sim", "sim"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		c.mu.Lock()
		c.by = nil
		c.mu.Unlock()
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID, res.Steps
}

// leaseQueries is how many step lease reads (ReadSteps) and lease rows
// changed alone (the known-row UPDATE, or the locked path's two round
// trips, counted once) c has counted.
func leaseQueries(c *QueryCounts) (reads, changes int64) {
	for _, q := range c.Top(1000, 1000) {
		switch {
		case strings.HasPrefix(q.Kind, "SELECT l.agent_id, l.owner_id") && !strings.Contains(q.Kind, "l.agent_id = ''"): // not ReadRun
			reads += q.Count
		case strings.HasPrefix(q.Kind, "UPDATE leases SET owner_id") || strings.HasPrefix(q.Kind, "[BEGIN | SELECT agent_id"):
			changes += q.Count
		}
	}
	return reads, changes
}

// TestARetryFindingAnotherReplicasEntryStaysLost: a retry after a lost
// reply (tried) whose lease another replica claimed meanwhile, and which
// finds that replica's different entry at its step, is refused as lost:
// only an identical stored entry is this landing's own.
func TestARetryFindingAnotherReplicasEntryStaysLost(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	l, lease := leasedStep(t, a)
	if _, err := a.db.pool.Exec(ctx, `UPDATE leases SET expires_at = now() - interval '1 hour' WHERE tenant = $1`, a.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `DELETE FROM locks WHERE tenant = $1`, a.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireStep(ctx, "s", "agent_a", coordination.ThisProcess("other"), time.Minute); err != nil {
		t.Fatal(err)
	}
	bl, err := b.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if bl.Step() != 1 {
		t.Fatalf("b's step is %d, want 1 (a's step, taken over)", bl.Step())
	}
	if _, err := bl.Append(ctx, newAnswer("agent_a", "theirs")); err != nil {
		t.Fatal(err)
	}
	bl.Release()
	l.(*stepLock).tried = true
	if _, released, err := l.LandLeased(ctx, newAnswer("agent_a", "mine"), lease.Version, 0); !errors.Is(err, coordination.ErrLeaseLost) || released {
		t.Fatalf("a retry that finds another replica's entry = %v (released %v); want ErrLeaseLost, not released", err, released)
	}
}

// TestALandingLostAtItsCommitThenCancelledIsFoundOnRetry: a landing whose
// commit went through (its lease not released in it: the row was not
// known) but whose answer was lost, retried after a cancel was recorded
// meanwhile, is that landing, found stored: the cancel refuses only a step
// that had not landed.
func TestALandingLostAtItsCommitThenCancelledIsFoundOnRetry(t *testing.T) {
	a, cut := cutAtCommit(t, "landed, then cancelled")
	landed := func() bool { return rows(t, a, "entries") > 0 }
	ctx := context.Background()
	l, lease := leasedStep(t, cut)
	cut.db.written.drop(cut.tenant, "s", "agent_a") // the landing fences by the lease but cannot release it
	e := newAnswer("agent_a", "landed, then cancelled")
	e.Time = time.Now()
	if _, _, err := l.LandLeased(ctx, e, lease.Version, 0); !unavailable(err) {
		t.Fatalf("LandLeased over a connection lost after its commit = %v; want the database unavailable", err)
	}
	if !landed() {
		t.Fatal("the cut landing did not commit, which tests nothing")
	}
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled, Time: time.Now(), Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	got, released, err := l.LandLeased(ctx, e, lease.Version, 0)
	if err != nil {
		t.Fatalf("the retry of a landing lost at its commit, a cancel recorded since: %v; want the stored entry found", err)
	}
	if released {
		t.Error("the retry says the lease was released; its first landing could not release it")
	}
	if got.Step != 1 || got.AnswerNum != 1 || rows(t, a, "entries") != 1 {
		t.Errorf("the retry returned step %d, answer %d, with %d entries stored; want 1, 1 and 1", got.Step, got.AnswerNum, rows(t, a, "entries"))
	}
}
