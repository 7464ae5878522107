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
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// lockRefusingStore fails the next run lock taken.
type lockRefusingStore struct {
	*memstore.Store
	refuse atomic.Bool
}

func (s *lockRefusingStore) LockRun(ctx context.Context, id string) (func(), error) {
	if s.refuse.Swap(false) {
		return nil, errors.New("dummy: the run lock could not be taken")
	}
	return s.Store.LockRun(ctx, id)
}

// TestASessionWhoseFirstStartFailedIsLeftCancelled: a session created for
// a run whose start then failed is still the one created for it, so the
// surface leaves it cancelled (NotStarted) rather than running with nothing
// running it; the start had forgotten that it was new. A session that ran
// is left as it is.
func TestASessionWhoseFirstStartFailedIsLeftCancelled(t *testing.T) {
	st := &lockRefusingStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.refuse.Store(true)
	if _, _, err := svc.Start(ctx, s.ID); err == nil {
		t.Fatal("the start did not fail")
	}
	left, err := svc.NotStarted(ctx, s.ID, "its run could not start")
	if err != nil || !left {
		t.Fatalf("NotStarted: %v, %v; want the session left cancelled", left, err)
	}
	res, err := svc.Result(ctx, s.ID)
	if err != nil || res.Status != coordination.StatusCancelled {
		t.Fatalf("the session reads %+v, %v; want cancelled", res, err)
	}
	// Run later, it is a resume: the cancel is lifted, and then it ran.
	if res, err := svc.Run(ctx, s.ID, nil); err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("run later: %+v, %v", res, err)
	}
	if left, err := svc.NotStarted(ctx, s.ID, "again"); err != nil || left {
		t.Fatalf("NotStarted of a session that ran: %v, %v; want it left as it is", left, err)
	}
}

// lockDownStore fails the next session locks as a database that cannot be
// reached fails them.
type lockDownStore struct {
	*memstore.Store
	down atomic.Int32
}

func (s *lockDownStore) LockSession(ctx context.Context, id string) (func(), error) {
	if s.down.Add(-1) >= 0 {
		return nil, coordination.ErrStoreUnavailable
	}
	return s.Store.LockSession(ctx, id)
}

// TestANotStartedRecordAnOutageKeptIsMadeOnceTheStoreAnswers: a session
// created for a run that was refused, whose "not started" record met an
// outage, is recorded so once the store answers, rather than reading
// running with nothing running it.
func TestANotStartedRecordAnOutageKeptIsMadeOnceTheStoreAnswers(t *testing.T) {
	st := &lockDownStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(3)
	if left, err := svc.NotStarted(ctx, s.ID, "the server was at its limit of running teams"); left || !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("NotStarted in an outage: %v, %v", left, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := svc.Result(ctx, s.ID)
		if err == nil && res.Status == coordination.StatusCancelled {
			if !strings.Contains(res.CancelReason, "not started") {
				t.Errorf("cancel reason %q", res.CancelReason)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session still reads %+v, %v, 5 s after the store answered", res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestANotStartedRetryLeavesASessionThatRanInterrupted: a not-started
// record held back by an outage (A), while the user resumed the session
// through replica B, whose run then stopped leaving it interrupted (handed
// over, no replica took it up yet): once A's store answers, A's retry does
// not record "not started" over a session that ran.
func TestANotStartedRetryLeavesASessionThatRanInterrupted(t *testing.T) {
	mem := memstore.New()
	st := &lockDownStore{Store: mem}
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	b, startedB := blockedService(mem, coordination.Options{HandOver: true})
	ctx := context.Background()
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(1 << 20)
	if left, err := a.NotStarted(ctx, s.ID, "the server was at its limit of running teams"); left || err == nil {
		t.Fatalf("NotStarted in an outage: %v, %v", left, err)
	}
	if _, _, err := b.Start(ctx, s.ID); err != nil { // run_team{session_id} through B
		t.Fatal(err)
	}
	<-startedB
	if err := b.Shutdown(ctx); err != nil { // B stops, handing its run over
		t.Fatal(err)
	}
	if res, err := a.Result(ctx, s.ID); err != nil || res.Status != coordination.StatusInterrupted {
		t.Fatalf("after B's hand-over: %+v, %v", res, err)
	}
	st.down.Store(0) // A's store answers
	time.Sleep(2 * time.Second)
	if res, err := a.Result(ctx, s.ID); err != nil || res.Status != coordination.StatusInterrupted {
		t.Errorf("a session that ran on B, interrupted, now reads %s (%q), %v", res.Status, res.CancelReason, err)
	}
}
