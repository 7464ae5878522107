package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestASecondFinalizeOfAStepDrivenSessionWaitsForTheFirst: finalize_team of
// a step-driven session, asked again (elsewhere) while the first's final
// call runs, returns the answer the first writes. A step-driven Finalize
// holds the run lock alone, with no lease to follow, so the second claims
// the lock again until the first lets it go.
func TestASecondFinalizeOfAStepDrivenSessionWaitsForTheFirst(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 2)
	presenting(provs, func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		inFinal <- struct{}{}
		time.Sleep(1500 * time.Millisecond)
		return coordtest.Answer("FINAL"), providers.Usage{}, nil
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	sc[0].Replies = []any{coordtest.Answer("4")}
	sc[1].Replies = []any{coordtest.Answer("four")}
	ctx := context.Background()
	for _, a := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: a}); err != nil {
			t.Fatal(err)
		}
	}
	first := make(chan error, 1)
	go func() {
		_, err := h.Service.Finalize(ctx, s.ID, "")
		first <- err
	}()
	<-inFinal
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	res, err := other.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatalf("the second Finalize, while the first's final call ran: %v", err)
	}
	if res.Status != coordination.StatusFinished || res.FinalAnswer == nil || *res.FinalAnswer != "FINAL" {
		t.Fatalf("the second Finalize returned %s, want the first's finished answer", coordtest.JSON(res))
	}
	if err := <-first; err != nil {
		t.Fatalf("the first Finalize: %v", err)
	}
}

// TestAContinuationOfACancelledStepDoesNotResumeTheSession: a step's
// continuation (After: where it began) polled after the session was
// cancelled and the step never landed refuses, and the session stays
// cancelled; a plain step would resume it.
func TestAContinuationOfACancelledStepDoesNotResumeTheSession(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	started := make(chan struct{}, 1)
	var calls atomic.Int32
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if calls.Add(1) > 1 {
			return coordtest.Answer("4"), providers.Usage{}, nil // a step the continuation took
		}
		started <- struct{}{}
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		done <- err
	}()
	<-started
	if _, err := h.Service.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	<-done
	after := 0
	_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a", After: &after})
	if !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("the continuation of a cancelled step = %v, want a refusal", err)
	}
	v, err := h.Service.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusCancelled {
		t.Fatalf("the session reads %s after the continuation, want cancelled", v.Result.Status)
	}
}
