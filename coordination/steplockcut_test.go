package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// cutFoldStore takes a step lock with its lease (StepLockWithLease) as
// the PostgreSQL store does, and, when armed, fails the take once as a
// connection cut mid-batch fails it: the outcome unknown, the claim it
// sent named. It sends one a row not known to the replica gets (the
// insert where there is none: version 1) while another step of the same
// agent in the same service holds version 1, as one whose batch lands
// first does; the insert would have landed nothing.
type cutFoldStore struct {
	*memstore.Store
	cut  atomic.Bool
	held atomic.Pointer[coordination.RunLease]
}

var errCutFold = errors.New("dummy: the connection was cut mid-batch")

func (s *cutFoldStore) LockStepWithLease(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.StepLock, *coordination.RunLease, error) {
	if !s.cut.CompareAndSwap(true, false) {
		l, err := s.LockStep(ctx, id, agent)
		return l, nil, err
	}
	// The other step's claim, this service's own, in flight.
	held, err := s.AcquireStep(ctx, id, agent, owner, ttl)
	if err != nil {
		return nil, nil, err
	}
	s.held.Store(&held)
	sent := held
	sent.Claimed = held.Claimed.Add(-time.Millisecond) // this batch's own, made a moment before
	return nil, &sent, errCutFold
}

// TestACutStepLockTakesBackOnlyItsOwnClaim: a take with its lease whose
// batch was cut takes back the claim it sent, and never another step's
// claim of the same version by the same service: that step is in flight,
// and its lease released would let its landing be refused and another
// replica claim the step.
func TestACutStepLockTakesBackOnlyItsOwnClaim(t *testing.T) {
	st := &cutFoldStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	agent := s.AgentIDs()[0]
	st.cut.Store(true)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); !errors.Is(err, errCutFold) {
		t.Fatalf("step: %v, want the cut batch's error", err)
	}
	held := st.held.Load()
	leases, err := st.ReadSteps(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l := leases[agent]; l == nil || l.Version != held.Version || l.Released {
		t.Errorf("the in-flight step's lease after another's cut take: %+v; want version %d unreleased", l, held.Version)
	}
}
