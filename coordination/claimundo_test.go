package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
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

// TestAResumeClaimWhoseAnswerWasLostLeavesTheSessionInterrupted: a claim
// that took over from a dead run and lost its answer is not released
// (the session would read running with nothing running it); it expires,
// and the session reads interrupted again, for a replica to take up.
func TestAResumeClaimWhoseAnswerWasLostLeavesTheSessionInterrupted(t *testing.T) {
	st := &lostClaimStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Store.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "dead-replica", Host: "elsewhere", PID: 1}, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20*time.Millisecond + coordination.MaxClockSkew + 50*time.Millisecond) // another host's lease: its expiry and the skew
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("before the resume: %v (%v), want interrupted", v.Result.Status, err)
	}
	st.loseRun.Store(true)
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, errLostClaim) {
		t.Fatalf("resume: %v, want the lost claim's error", err)
	}
	time.Sleep(400 * time.Millisecond) // the lost claim's TTL, twice
	l, err := st.ReadRun(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Released {
		t.Fatalf("the lost resume's claim was released: %+v; the session would read running with nothing running it", l)
	}
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("after the lost resume's claim expired: %v (%v), want interrupted", v.Result.Status, err)
	}
}
