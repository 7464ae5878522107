package coordination_test

import (
	"context"
	"errors"
	"fmt"
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

// The two skips of Service.stoppedOnError past the cause: a run stopped on
// an error of its own (not a lost lease, not an outage) reads its run lease
// first, and marks the session cancelled only when the lease is its own.
// TestARunThatStopsOnAnErrorLeavesItsSessionCancelledNotRunning
// (stoppedonerror_test.go) is the path that marks it.

// errLeaseUnread is the store unreachable when the run lease is read.
var errLeaseUnread = fmt.Errorf("dummy: reading the run lease: %w", coordination.ErrStoreUnavailable)

// leaseUnreadStore is a brokenStepStore whose run lease reads fail as an
// outage from the moment a step lock was refused, and until the test lets
// them succeed again: a store gone away just as the run stopped on its
// step's error. Every other call answers.
type leaseUnreadStore struct {
	*brokenStepStore
	readsDown   atomic.Bool
	failedReads atomic.Int64
}

func (s *leaseUnreadStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.brokenStepStore.LockStep(ctx, id, agent)
	if err != nil {
		s.readsDown.Store(true)
	}
	return l, err
}

func (s *leaseUnreadStore) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	if s.readsDown.Load() {
		s.failedReads.Add(1)
		return nil, errLeaseUnread
	}
	return s.brokenStepStore.ReadRun(ctx, id)
}

// cancelledEntries counts the session's cancelled entries in st's ledger.
func cancelledEntries(t *testing.T, st *memstore.Store, id string) int {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, se := range l.Session {
		if se.Kind == coordination.SessionCancelled {
			n++
		}
	}
	return n
}

// TestARunStoppedOnAnErrorWhoseLeaseCannotBeReadReadsInterrupted: a run
// whose step fails with an error of the store's, and whose run lease then
// cannot be read (the store unreachable), cannot tell whether the session
// is still its own; it writes no cancel and says so in the log. Nor does
// it release its lease, though the store answers again by the run's end:
// released, the session read running for ever with nothing running it.
// The lease expires and the session reads interrupted, which is true, and
// runs on from there.
func TestARunStoppedOnAnErrorWhoseLeaseCannotBeReadReadsInterrupted(t *testing.T) {
	st := &leaseUnreadStore{brokenStepStore: &brokenStepStore{Store: memstore.New()}}
	logs := &coordtest.SyncBuffer{}
	svc, s := fastLeaseTeam(t, st, logs, 300*time.Millisecond)
	ctx := context.Background()
	st.failWith(errStepStoreBroken)
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, errStepStoreBroken) {
		t.Fatalf("run: %v, want the step's error", err)
	}
	if st.failedReads.Load() == 0 {
		t.Fatal("no read of the run lease failed after the step's error; the test tests nothing")
	}
	st.readsDown.Store(false)
	if !strings.Contains(logs.String(), "its lease could not be read") {
		t.Errorf("the log does not say the lease could not be read:\n%s", logs.String())
	}
	if n := cancelledEntries(t, st.Store, s.ID); n != 0 {
		t.Fatalf("%d cancelled entries after a run whose lease could not be read; want none (whose the session is was unknown)", n)
	}
	l, err := st.Store.ReadRun(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l == nil || l.Released {
		t.Fatalf("the run lease after the run stopped: %+v, want it left unreleased to expire", l)
	}
	waitInterrupted(t, svc, s.ID)
	st.failWith(nil)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("running the session on: %v", err)
	}
	if res.Status != coordination.StatusFinished {
		t.Fatalf("the run on ended %s, want finished", res.Status)
	}
}

// takenOverStore is a brokenStepStore in which another replica claims the
// run the moment a step lock is first refused: the run's lease is
// released by its version (as an expiry would free it) and claimed by
// another owner, before the run's loop hears of the step's error.
type takenOverStore struct {
	*brokenStepStore
	taken atomic.Bool
	by    coordination.RunLease // the other replica's claim, once taken
}

var anotherReplica = coordination.LeaseOwner{ID: "another-replica", Host: "elsewhere", PID: 1}

func (s *takenOverStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.brokenStepStore.LockStep(ctx, id, agent)
	if err != nil && s.taken.CompareAndSwap(false, true) {
		// The other replica's own calls: the run's loop may cancel this
		// step's context meanwhile (its other agent's step failed too).
		ctx := context.WithoutCancel(ctx)
		cur, rerr := s.Store.ReadRun(ctx, id)
		if rerr != nil || cur == nil {
			panic(fmt.Sprintf("the run's lease before the takeover: %+v, %v", cur, rerr))
		}
		if rerr := s.Store.ReleaseRun(ctx, id, cur.Version); rerr != nil {
			panic(rerr)
		}
		if s.by, rerr = s.Store.AcquireRun(ctx, id, anotherReplica, time.Hour); rerr != nil {
			panic(rerr)
		}
	}
	return l, err
}

// TestARunStoppedOnAnErrorAfterAnotherClaimWritesNoCancel: a run whose
// lease another replica claimed just as its step failed with an error of
// its own (not yet fenced: no heartbeat fell due in between) stops on
// that error, and leaves the session alone: it is the other replica's,
// and a cancel written now would stop that replica's run.
func TestARunStoppedOnAnErrorAfterAnotherClaimWritesNoCancel(t *testing.T) {
	st := &takenOverStore{brokenStepStore: &brokenStepStore{Store: memstore.New()}}
	// A heartbeat that never falls due in the test: the run does not learn
	// of the takeover by a renewal (that would be ErrLeaseLost, the other
	// skip), only by stoppedOnError's read of the lease.
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		RunHeartbeat: time.Hour, RunLeaseTTL: 2 * time.Hour})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.failWith(errStepStoreBroken)
	_, err = svc.Run(ctx, s.ID, nil)
	if !errors.Is(err, errStepStoreBroken) || errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("run: %v, want the step's error (not a lost lease)", err)
	}
	if !st.taken.Load() {
		t.Fatal("the run was never taken over; the test tests nothing")
	}
	if n := cancelledEntries(t, st.Store, s.ID); n != 0 {
		t.Fatalf("%d cancelled entries after the run was taken over; want none (the session is the other replica's)", n)
	}
	l, err := st.Store.ReadRun(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l == nil || l.ID != anotherReplica.ID || l.Version != st.by.Version || l.Released {
		t.Fatalf("the run lease after the run stopped: %+v, want the other replica's claim %+v, held", l, st.by)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusRunning {
		t.Fatalf("status %s, want %s (the other replica runs it)", v.Result.Status, coordination.StatusRunning)
	}
}

// TestAStopWithoutACauseWritesNothing: stoppedOnError with no cause writes
// nothing, where an error cancels the same session; both leave the run
// free to release its lease (the store took what there was to write).
func TestAStopWithoutACauseWritesNothing(t *testing.T) {
	st := memstore.New()
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	if !coordination.StoppedOnError(ctx, svc, s, nil) {
		t.Error("a stop without a cause left the lease to expire")
	}
	if n := cancelledEntries(t, st, s.ID); n != 0 {
		t.Fatalf("a stop without a cause: %d cancelled entries, want none", n)
	}
	if !coordination.StoppedOnError(ctx, svc, s, errStepStoreBroken) {
		t.Error("a session marked cancelled left the lease to expire")
	}
	if n := cancelledEntries(t, st, s.ID); n != 1 {
		t.Fatalf("stopped on %v: %d cancelled entries, want 1 (the session, not run here, is no other process's)", errStepStoreBroken, n)
	}
}

// cancelRefusedStore is a brokenStepStore that cannot record a cancel
// while a step lock is refused (or while refuse is set): the store gone
// away just as the run stopped.
type cancelRefusedStore struct {
	*brokenStepStore
	refuse  atomic.Bool
	refused atomic.Int64
}

var errCancelRefused = fmt.Errorf("dummy: recording the cancel: %w", coordination.ErrStoreUnavailable)

func (s *cancelRefusedStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if err := s.refusing(e); err != nil {
		return coordination.SessionEntry{}, err
	}
	return s.Store.AppendSession(ctx, id, e)
}

// AppendSessionLeased refuses as AppendSession does: a run's cancel is
// written fenced by its lease.
func (s *cancelRefusedStore) AppendSessionLeased(ctx context.Context, id string, v int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if err := s.refusing(e); err != nil {
		return coordination.SessionEntry{}, err
	}
	return s.Store.AppendSessionLeased(ctx, id, v, e)
}

func (s *cancelRefusedStore) refusing(e coordination.SessionEntry) error {
	if e.Kind == coordination.SessionCancelled && (s.fail.Load() != nil || s.refuse.Load()) {
		s.refused.Add(1)
		return errCancelRefused
	}
	return nil
}

// TestARunThatCannotRecordWhyItStoppedReadsInterrupted: a run stopped on
// its step's error whose cancel the store cannot take for as long as the
// lease lasts leaves its lease to expire rather than released, so the
// session reads interrupted (true, and resumable) instead of running for
// ever with nothing running it.
func TestARunThatCannotRecordWhyItStoppedReadsInterrupted(t *testing.T) {
	st := &cancelRefusedStore{brokenStepStore: &brokenStepStore{Store: memstore.New()}}
	svc, s := fastLeaseTeam(t, st, nil, 300*time.Millisecond)
	ctx := context.Background()
	st.failWith(errStepStoreBroken)
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, errStepStoreBroken) {
		t.Fatalf("run: %v, want the step's error", err)
	}
	if st.refused.Load() == 0 {
		t.Fatal("no cancel was refused; the test tests nothing")
	}
	st.failWith(nil)
	waitInterrupted(t, svc, s.ID)
}

// TestARunCancelledWhileTheStoreIsDownReadsInterrupted: a run cancelled
// while its cancel cannot be recorded (the store unreachable for longer
// than the lease) leaves its lease to expire, so the session reads
// interrupted instead of running with nothing running it; a run of the
// same server resumes it at once, its own left lease no obstacle, and
// says nothing of a run that died.
func TestARunCancelledWhileTheStoreIsDownReadsInterrupted(t *testing.T) {
	st := &cancelRefusedStore{brokenStepStore: &brokenStepStore{Store: memstore.New()}}
	logs := &coordtest.SyncBuffer{}
	// Calls long enough that the cancel comes first: an instant sim team
	// could decide before it, on a loaded machine, and nothing is cancelled.
	svc, s := fastLeaseTeam(t, st, logs, 300*time.Millisecond, "sim:latency=100ms", "sim:latency=100ms")
	ctx := context.Background()
	st.refuse.Store(true)
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.Cancel()
	if _, err := r.Result(); err == nil {
		t.Fatal("a run whose cancel could not be recorded reported no error")
	}
	if st.refused.Load() < 2 {
		t.Fatalf("the cancel was tried %d times; want it tried again while the lease lasted", st.refused.Load())
	}
	if c := svc.Counts(); c.RunsLostLease != 0 {
		t.Errorf("counts %+v: a record given up in an outage counted as a lost lease; nobody claimed it", c)
	}
	st.refuse.Store(false)
	if n := cancelledEntries(t, st.Store, s.ID); n != 0 {
		t.Fatalf("%d cancelled entries; the store took none", n)
	}
	waitInterrupted(t, svc, s.ID)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("running the session on: %v", err)
	}
	if res.Status != coordination.StatusFinished {
		t.Fatalf("the run on ended %s, want finished", res.Status)
	}
}

// TestARunOfTheSameServerTakesBackItsOwnLeftLease: a session whose run
// left its lease to expire is run on by the same server before it has:
// the lease is this server's and no run of it holds the session, so the
// claim takes it back instead of answering that the session is running,
// and records no resumed-from-a-dead-run event.
func TestARunOfTheSameServerTakesBackItsOwnLeftLease(t *testing.T) {
	st := &leaseUnreadStore{brokenStepStore: &brokenStepStore{Store: memstore.New()}}
	// A lease of 2 s, renewed until the run ends: the next run, at once,
	// claims it well before it expires.
	svc, s := fastLeaseTeam(t, st, nil, 2*time.Second)
	ctx := context.Background()
	st.failWith(errStepStoreBroken)
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, errStepStoreBroken) {
		t.Fatalf("run: %v, want the step's error", err)
	}
	st.readsDown.Store(false)
	st.failWith(nil)
	l, err := st.Store.ReadRun(ctx, s.ID)
	if err != nil || l == nil || l.Released {
		t.Fatalf("the lease after the run stopped: %+v, %v; want it left", l, err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("running the session on at once: %v", err)
	}
	if res.Status != coordination.StatusFinished {
		t.Fatalf("the run on ended %s, want finished", res.Status)
	}
	events, err := svc.Events(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Type == "resumed" {
			t.Errorf("a run of the same server taking back its own left lease recorded %q: %s", e.Type, e.Message)
		}
	}
}

// fastLeaseTeam is a two-sim team on st whose run lease, renewed every
// 5 ms, lasts ttl; logs, if set, hears the service.
func fastLeaseTeam(t *testing.T, st coordination.Store, logs *coordtest.SyncBuffer, ttl time.Duration, models ...string) (*coordination.Service, *coordination.Session) {
	t.Helper()
	log := zerolog.Nop()
	if logs != nil {
		log = zerolog.New(logs)
	}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: log, RunHeartbeat: 5 * time.Millisecond, RunLeaseTTL: ttl})
	if len(models) == 0 {
		models = []string{"sim", "sim"}
	}
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

// waitInterrupted waits, at most 5 s, for the session to read
// interrupted: its left lease expired.
func waitInterrupted(t *testing.T, svc *coordination.Service, id string) {
	t.Helper()
	ctx := context.Background()
	if !coordination.Eventually(5*time.Second, func() bool {
		v, err := svc.Status(ctx, id)
		return err == nil && v.Result.Status == coordination.StatusInterrupted
	}) {
		v, err := svc.Status(ctx, id)
		t.Fatalf("the session reads %v (%v) 5 s after the run stopped; want %s once its lease expired", v.Result.Status, err, coordination.StatusInterrupted)
	}
}
