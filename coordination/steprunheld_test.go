package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// runnerAndStepper are two replicas on one memory store: A, whose models
// block until cancelled (started tells each call), and B, whose models
// answer at once, counting their calls.
func runnerAndStepper() (a *coordination.Service, started chan struct{}, b *coordination.Service, calledB *atomic.Int32) {
	st := memstore.New()
	a, started = blockedService(st, coordination.Options{Parallel: 1})
	calledB = &atomic.Int32{}
	b = coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			calledB.Add(1)
			return coordtest.Answer("Answer: 4"), providers.Free(), nil
		}), nil
	}})
	return a, started, b, calledB
}

// TestAStepOfASessionARunHoldsIsRefused: a session is driven one way at a
// time. A step asked through another replica (B) of a session whose run A
// holds would call the agent's model beside A's run, outside its
// parallelism, spend and timeout: it is refused, as is one asked of the
// replica that runs it, and nothing is called. Two services on one store
// are two replicas.
func TestAStepOfASessionARunHoldsIsRefused(t *testing.T) {
	a, startedA, b, calledB := runnerAndStepper()
	ctx := context.Background()
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := a.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-startedA // A's run is calling agent_a's model; agent_b waits for its turn
	for name, svc := range map[string]*coordination.Service{"B": b, "A": a} {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); !errors.Is(err, coordination.ErrSessionRunning) {
			t.Errorf("a step through %s of a session A's run drives: %v, want ErrSessionRunning", name, err)
		}
	}
	if n := calledB.Load(); n > 0 {
		t.Errorf("B called agent_b's model %d times beside A's run", n)
	}
	r.Cancel()
	<-r.Done()
	// Cancelled, nothing runs it: stepping resumes it, as before.
	if _, err := b.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Errorf("a step of the cancelled session: %v", err)
	}
}

// TestAStepOfAStepDrivenSessionRunElsewhereIsRefused: a step-driven session
// (start_team) that run_team{session_id} runs on replica A: a step asked
// through B would be a second driver beside A's run.
func TestAStepOfAStepDrivenSessionRunElsewhereIsRefused(t *testing.T) {
	a, startedA, b, calledB := runnerAndStepper()
	ctx := context.Background()
	s, err := b.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := a.Start(ctx, s.ID) // run_team{session_id} through A
	if err != nil {
		t.Fatal(err)
	}
	defer func() { r.Cancel(); <-r.Done() }()
	<-startedA
	if _, err := b.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Errorf("a step through B of a step-driven session A's run drives: %v, want ErrSessionRunning", err)
	}
	if n := calledB.Load(); n > 0 {
		t.Errorf("B called agent_b's model %d times beside A's run", n)
	}
}
