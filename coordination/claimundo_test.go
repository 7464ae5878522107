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
	"github.com/massgen-go/massgen-mcp/permissions"
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

// TestAStepTakeoverWhoseAnswerWasLostKeepsItsRunOfClaims: a step claim
// that took over a try whose process died, its answer lost, is expired,
// not released: released, it would end that try's run of claims, and the
// agent's next step would have its whole max_tool_calls_per_step again,
// the dead try's calls forgotten. The agent's next step takes it up at
// once, with what the dead try left.
func TestAStepTakeoverWhoseAnswerWasLostKeepsItsRunOfClaims(t *testing.T) {
	st := &lostClaimStore{Store: memstore.New()}
	model := &callsGiven{}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: model.open})
	ctx := context.Background()
	s := pairStepping(t, svc, coordination.Rules{MaxToolCallsPerStep: 3})
	agent := s.Agents[0].ID
	ran := permissions.Record{Agent: agent, Step: 1, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "go test ./..."}, Outcome: permissions.Allowed}
	leaveTry(t, st, s.ID, agent, leftTry{tried: 20 * time.Millisecond, decided: []permissions.Record{ran, ran}})
	st.loseStep.Store(true)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); !errors.Is(err, errLostClaim) {
		t.Fatalf("step: %v, want the lost claim's error", err)
	}
	leases, err := st.ReadSteps(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l := leases[agent]; l == nil || l.Released || l.Held(time.Now().Add(10*time.Millisecond)) {
		t.Fatalf("the lost takeover's step lease: %+v; want it expired, not released", l)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatalf("the agent cannot step after a lost claim: %v", err)
	}
	if given := model.list(); len(given) != 1 || given[0] != 1 {
		t.Errorf("the step after the lost takeover was given %v tool calls; want [1], what the dead try's 2 left of 3", given)
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

// unwrittenClaimStore fails a run claim once without writing it (a refused
// connection), and then fails lease reads while readsDown holds, so the
// undo of that claim waits in its outage backoff.
type unwrittenClaimStore struct {
	*memstore.Store
	failRun, readsDown atomic.Bool
}

func (s *unwrittenClaimStore) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	if s.failRun.CompareAndSwap(true, false) {
		s.readsDown.Store(true)
		return coordination.RunLease{}, errLostClaim
	}
	return s.Store.AcquireRun(ctx, id, owner, ttl)
}

func (s *unwrittenClaimStore) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	if s.readsDown.Load() {
		return nil, errLostClaim
	}
	return s.Store.ReadRun(ctx, id)
}

// TestARetriedRunIsNotReleasedByTheUndoOfTheClaimBeforeIt: a failed run
// claim the store never wrote leaves its version free, and a retried start
// of the same service claims that very version; the undo of the failed
// claim, still waiting out an outage, must not release the live run's
// lease when it wakes. The retried claim ends the undo first.
func TestARetriedRunIsNotReleasedByTheUndoOfTheClaimBeforeIt(t *testing.T) {
	st := &unwrittenClaimStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 5 * time.Second})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=1s", "sim:latency=1s"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st.failRun.Store(true)
	if _, _, err := svc.Start(ctx, s.ID); !errors.Is(err, errLostClaim) {
		t.Fatalf("start: %v, want the failed claim's error", err)
	}
	time.Sleep(50 * time.Millisecond) // the undo's first read fails; it waits 200 ms
	st.readsDown.Store(false)
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatalf("the retried start: %v", err)
	}
	time.Sleep(600 * time.Millisecond) // past the undo's next attempt, inside the first round
	l, err := st.ReadRun(ctx, s.ID)
	if err != nil || l == nil || l.Released {
		t.Fatalf("the retried run's lease = %+v, %v; want held, not released by the undo of the failed claim", l, err)
	}
	if _, err := r.Result(); err != nil {
		t.Fatalf("the retried run: %v", err)
	}
}
