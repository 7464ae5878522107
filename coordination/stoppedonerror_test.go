package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// brokenStepStore refuses every step lock with its fail error while one
// is set (not busy, not an outage): a run's step fails with it.
type brokenStepStore struct {
	*memstore.Store
	fail atomic.Pointer[error]
}

var errStepStoreBroken = errors.New("dummy: the step store is broken")

func (s *brokenStepStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	if err := s.fail.Load(); err != nil {
		return nil, *err
	}
	return s.Store.LockStep(ctx, id, agent)
}

func (s *brokenStepStore) failWith(err error) {
	if err == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&err)
}

// TestARunThatStopsOnAnErrorLeavesItsSessionCancelledNotRunning: a run
// whose step fails with an error of the store's returns it, and the
// session reads cancelled with the error as its reason (it read running
// for ever: nothing ran it, and its released lease never read
// interrupted); resuming it runs it to its end.
func TestARunThatStopsOnAnErrorLeavesItsSessionCancelledNotRunning(t *testing.T) {
	st := &brokenStepStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	st.failWith(errStepStoreBroken)
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, errStepStoreBroken) {
		t.Fatalf("run: %v, want the step's error", err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusCancelled {
		t.Fatalf("status after the run stopped on an error: %s, want %s", v.Result.Status, coordination.StatusCancelled)
	}
	said := false
	for _, ev := range v.Timeline {
		said = said || (ev.Type == "cancelled" && strings.Contains(ev.Message, "stopped on an error") && strings.Contains(ev.Message, "step store is broken"))
	}
	if !said {
		t.Errorf("the timeline does not say why the run stopped: %+v", v.Timeline)
	}
	st.failWith(nil)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("resuming after the error: %v", err)
	}
	if res.Status != coordination.StatusFinished {
		t.Fatalf("resumed run ended %s, want finished", res.Status)
	}
}

// TestARunFencedByALostLeaseWritesNoCancel: a run stopped because another
// process claimed a lease it held writes nothing: the session is that
// process's now, and reads running.
func TestARunFencedByALostLeaseWritesNoCancel(t *testing.T) {
	st := &brokenStepStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	st.failWith(fmt.Errorf("step fenced: %w", coordination.ErrLeaseLost))
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("run: %v, want the lost lease", err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusRunning {
		t.Fatalf("status after a fenced run: %s, want %s (left to the lease's new holder)", v.Result.Status, coordination.StatusRunning)
	}
}
