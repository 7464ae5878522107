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

// lostClaimStore writes a lease claim and then loses its answer, once for
// the run and once for a step when armed, as a request cancelled or a
// connection cut after the database committed the claim would.
type lostClaimStore struct {
	*memstore.Store
	loseRun, loseStep atomic.Bool
}

var errLostClaim = errors.New("dummy: the claim's answer was lost")

func (s *lostClaimStore) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.Store.AcquireRun(ctx, id, owner, ttl)
	if err == nil && s.loseRun.CompareAndSwap(true, false) {
		return coordination.RunLease{}, errLostClaim
	}
	return l, err
}

func (s *lostClaimStore) AcquireStep(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.Store.AcquireStep(ctx, id, agent, owner, ttl)
	if err == nil && s.loseStep.CompareAndSwap(true, false) {
		return coordination.RunLease{}, errLostClaim
	}
	return l, err
}

// TestARunClaimWhoseAnswerWasLostIsTakenBack: the run lease a failed start
// wrote is released (it would otherwise read interrupted once it expired,
// and a replica resuming interrupted runs would start a run nobody asked
// for), and the session can be run at once.
func TestARunClaimWhoseAnswerWasLostIsTakenBack(t *testing.T) {
	st := &lostClaimStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	st.loseRun.Store(true)
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, errLostClaim) {
		t.Fatalf("start: %v, want the lost claim's error", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := st.ReadRun(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if l != nil && l.Released {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lost claim's run lease was never released: %+v", l)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatalf("the session cannot be run after a lost claim: %v", err)
	}
	if _, err := r.Result(); err != nil {
		t.Fatal(err)
	}
}

// TestAStepClaimWhoseAnswerWasLostIsTakenBack: the step lease a failed
// step wrote is released before the step returns, so the agent is not
// busy until it expires.
func TestAStepClaimWhoseAnswerWasLostIsTakenBack(t *testing.T) {
	st := &lostClaimStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	agent := s.AgentIDs()[0]
	st.loseStep.Store(true)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); !errors.Is(err, errLostClaim) {
		t.Fatalf("step: %v, want the lost claim's error", err)
	}
	leases, err := st.ReadSteps(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l := leases[agent]; l == nil || !l.Released {
		t.Fatalf("the lost claim's step lease is not released: %+v", l)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatalf("the agent cannot step after a lost claim: %v", err)
	}
}

// TestARefusedClaimReleasesNothing: a start refused because a run holds
// the session leaves that run's lease alone.
func TestARefusedClaimReleasesNothing(t *testing.T) {
	st := &lostClaimStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	if _, err := st.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "another-replica", Host: "elsewhere", PID: 1}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("start: %v, want ErrSessionRunning", err)
	}
	time.Sleep(50 * time.Millisecond)
	if l, err := st.ReadRun(ctx, s.ID); err != nil || l == nil || l.Released || l.ID != "another-replica" {
		t.Fatalf("the holder's lease is %+v (%v), want it held still", l, err)
	}
}
