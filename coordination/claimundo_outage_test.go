package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// What claimundo.go says of the undo of a failed run claim and no other
// test pins: it waits out an outage and then takes the claim back; it
// releases only this service's claim; and it gives up, saying so, once
// the claim would have expired.

// undoTeam is a service on st whose run undo tries within ttl (heartbeat
// 50 ms, as TestARetriedRunIsNotReleasedByTheUndoOfTheClaimBeforeIt's),
// logging to logs, and a session of two sim agents.
func undoTeam(t *testing.T, st coordination.Store, logs *coordtest.SyncBuffer, ttl time.Duration) (*coordination.Service, *coordination.Session) {
	t.Helper()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.New(logs),
		RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: ttl})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

// lostClaimThenDownStore writes a run claim and loses its answer (once,
// when armed), and then fails lease reads while readsDown holds: the
// undo of a claim that was written meets the outage that lost its answer.
type lostClaimThenDownStore struct {
	*lostClaimStore
	readsDown   atomic.Bool
	failedReads atomic.Int64
}

func (s *lostClaimThenDownStore) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.lostClaimStore.AcquireRun(ctx, id, owner, ttl)
	if errors.Is(err, errLostClaim) {
		s.readsDown.Store(true)
	}
	return l, err
}

func (s *lostClaimThenDownStore) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	if s.readsDown.Load() {
		s.failedReads.Add(1)
		return nil, errLostClaim
	}
	return s.lostClaimStore.ReadRun(ctx, id)
}

// undoInAnOutage starts a run whose claim is written and its answer lost,
// and returns once the claim's undo has met the outage that lost it (the
// lease's reads failing until st.readsDown is cleared).
func undoInAnOutage(t *testing.T) (*lostClaimThenDownStore, *coordination.Service, *coordination.Session) {
	t.Helper()
	st := &lostClaimThenDownStore{lostClaimStore: &lostClaimStore{Store: memstore.New()}}
	svc, s := undoTeam(t, st, &coordtest.SyncBuffer{}, 10*time.Second)
	st.loseRun.Store(true)
	if _, _, err := svc.Start(context.Background(), s.ID); !errors.Is(err, errLostClaim) {
		t.Fatalf("start: %v, want the lost claim's error", err)
	}
	if !coordination.Eventually(10*time.Second, func() bool { return st.failedReads.Load() > 0 }) {
		t.Fatal("the undo never tried to read the lease")
	}
	return st, svc, s
}

// TestAnUndoWaitsOutAnOutageAndThenTakesTheClaimBack: a run claim written
// and its answer lost, whose lease cannot be read at first, is released
// once the store answers, without another start: the undo tries again
// with the outage backoff rather than giving up at its first failed read.
func TestAnUndoWaitsOutAnOutageAndThenTakesTheClaimBack(t *testing.T) {
	st, _, s := undoInAnOutage(t)
	ctx := context.Background()
	l, err := st.Store.ReadRun(ctx, s.ID)
	if err != nil || l == nil || l.Released {
		t.Fatalf("the lost claim, read past the outage: %+v, %v; want it written and unreleased", l, err)
	}
	st.readsDown.Store(false)
	released := func() bool {
		l, err := st.Store.ReadRun(ctx, s.ID)
		return err == nil && l != nil && l.Released
	}
	if !coordination.Eventually(10*time.Second, released) {
		l, _ := st.Store.ReadRun(ctx, s.ID)
		t.Fatalf("the lost claim was not released once the store answered: %+v", l)
	}
}

// undoReadsStore is an unwrittenClaimStore that counts the lease reads it
// failed and answered.
type undoReadsStore struct {
	*unwrittenClaimStore
	failed, answered atomic.Int64
}

func (s *undoReadsStore) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	l, err := s.unwrittenClaimStore.ReadRun(ctx, id)
	if err == nil {
		s.answered.Add(1)
	} else {
		s.failed.Add(1)
	}
	return l, err
}

// TestAnUndoLeavesAnotherReplicasClaimAlone: a run claim the store never
// wrote leaves version 1 free; another replica claims it while the undo
// waits out the outage. The undo, reading the lease once the store
// answers, finds that very version under another owner and leaves it: a
// retried start here is refused, the other replica running it.
func TestAnUndoLeavesAnotherReplicasClaimAlone(t *testing.T) {
	st := &undoReadsStore{unwrittenClaimStore: &unwrittenClaimStore{Store: memstore.New()}}
	svc, s := undoTeam(t, st, &coordtest.SyncBuffer{}, 10*time.Second)
	ctx := context.Background()
	st.failRun.Store(true)
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, errLostClaim) {
		t.Fatalf("start: %v, want the failed claim's error", err)
	}
	if !coordination.Eventually(10*time.Second, func() bool { return st.failed.Load() > 0 }) {
		t.Fatal("the undo never tried to read the lease")
	}
	other, err := st.Store.AcquireRun(ctx, s.ID, anotherReplica, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if other.Version != 1 {
		t.Fatalf("the other replica's claim is version %d; want 1, the version the failed claim would have written", other.Version)
	}
	before := st.answered.Load()
	st.readsDown.Store(false)
	if !coordination.Eventually(10*time.Second, func() bool { return st.answered.Load() > before }) {
		t.Fatal("the undo never read the lease once the store answered")
	}
	// The start ends the undo, waiting for its attempt under way, before it
	// claims: by its answer the undo has done all it will.
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("a start while the other replica runs the session: %v, want %v", err, coordination.ErrSessionRunning)
	}
	l, err := st.Store.ReadRun(ctx, s.ID)
	if err != nil || l == nil || l.ID != anotherReplica.ID || l.Version != other.Version || l.Released {
		t.Fatalf("the run lease: %+v, %v; want the other replica's claim %+v, unreleased", l, err, other)
	}
}

// TestAnUndoGivesUpWhenTheClaimWouldHaveExpired: an undo that cannot read
// the lease stops trying once its next attempt would come after the claim,
// if written, had expired, and says so in the log; the session can then
// be run as soon as the store answers.
func TestAnUndoGivesUpWhenTheClaimWouldHaveExpired(t *testing.T) {
	st := &unwrittenClaimStore{Store: memstore.New()}
	logs := &coordtest.SyncBuffer{}
	svc, s := undoTeam(t, st, logs, 500*time.Millisecond)
	ctx := context.Background()
	st.failRun.Store(true)
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, errLostClaim) {
		t.Fatalf("start: %v, want the failed claim's error", err)
	}
	const gaveUp = "could not tell whether a failed claim was written"
	if !coordination.Eventually(10*time.Second, func() bool { return strings.Contains(logs.String(), gaveUp) }) {
		t.Fatalf("the undo did not give up by the claim's expiry; the log:\n%s", logs.String())
	}
	st.readsDown.Store(false)
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatalf("a start after the undo gave up: %v", err)
	}
	if _, err := r.Result(); err != nil {
		t.Fatalf("the run: %v", err)
	}
}

// TestShutdownLetsAFailedClaimsUndoFinish: a run claim written and its
// answer lost is being taken back, through an outage, when the service
// shuts down: Shutdown waits for the undo, so the claim is released before
// the caller closes the store. It returned at once, and the undo went on
// against a closed store until it gave up, the claim left to expire and
// the session to read interrupted, for a replica to run unasked.
func TestShutdownLetsAFailedClaimsUndoFinish(t *testing.T) {
	st, svc, s := undoInAnOutage(t)
	ctx := context.Background()
	time.AfterFunc(300*time.Millisecond, func() { st.readsDown.Store(false) })
	sctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	if err := svc.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v; want it to wait for the undo", err)
	}
	if l, err := st.Store.ReadRun(ctx, s.ID); err != nil || l == nil || !l.Released {
		t.Fatalf("the lost claim when Shutdown returned: %+v, %v; want it taken back", l, err)
	}
}

// TestAShutdownOutOfTimeStopsTheUndo: an undo still meeting the outage when
// the shutdown's time runs out is stopped, not left to use a store the
// caller is about to close: Shutdown says its time ran out, and the store
// answering afterwards is not asked to take the claim back.
func TestAShutdownOutOfTimeStopsTheUndo(t *testing.T) {
	st, svc, s := undoInAnOutage(t)
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := svc.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown while the undo cannot finish: %v; want its time run out", err)
	}
	st.readsDown.Store(false)
	time.Sleep(2 * time.Second) // a dozen of the undo's outage waits
	if l, err := st.Store.ReadRun(ctx, s.ID); err != nil || l == nil || l.Released {
		t.Errorf("the lost claim after the shutdown: %+v, %v; want it left to expire, the undo stopped", l, err)
	}
}

// releaseDownStore refuses the next run lease release, as an unreachable
// store does.
type releaseDownStore struct {
	*memstore.Store
	down atomic.Int32
}

func (s *releaseDownStore) ReleaseRun(ctx context.Context, id string, version int64) error {
	if s.down.Add(-1) >= 0 {
		return coordination.ErrStoreUnavailable
	}
	return s.Store.ReleaseRun(ctx, id, version)
}

// TestARunLeaseWhoseReleaseFailedIsTakenBack: a start fails after its
// claim (a host agent cannot be run), and the store is unreachable as it
// lets the lease go. The release is tried again: left, the lease would
// expire, the session (never started) would read interrupted, and a
// replica resuming those would run a team whose start had failed.
func TestARunLeaseWhoseReleaseFailedIsTakenBack(t *testing.T) {
	st := &releaseDownStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 10 * time.Second})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "me", Model: "host"}, {ID: "agent_a", Model: "sim"}}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(1)
	if _, _, err := svc.Start(context.Background(), s.ID); !errors.Is(err, coordination.ErrHostInRunTeam) {
		t.Fatalf("start: %v, want ErrHostInRunTeam", err)
	}
	if st.down.Load() > 0 {
		t.Fatal("the release never met the outage")
	}
	released := coordination.Eventually(5*time.Second, func() bool {
		l, err := st.ReadRun(context.Background(), s.ID)
		return err == nil && l != nil && l.Released
	})
	if !released {
		t.Fatal("the lease of the failed start was left to expire")
	}
}
