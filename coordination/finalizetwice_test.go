package coordination_test

import (
	"context"
	"errors"
	"strings"
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
	h, s, first := finalizingStepTeam(t, 1500*time.Millisecond)
	ctx := context.Background()
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	res, err := other.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatalf("the second Finalize, while the first's final call ran: %v", err)
	}
	if res.Status != coordination.StatusFinished || res.FinalAnswer == nil || *res.FinalAnswer != "FINAL" {
		t.Fatalf("the second Finalize returned %s, want the first's finished answer", coordtest.JSON(res))
	}
	if f := <-first; f.err != nil {
		t.Fatalf("the first Finalize: %v", f.err)
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

// TestAStepDrivenFinalizeTakesNoRunLease: finalize_team of a step-driven
// session holds its run lock alone. A run lease it left (an outage at the
// release, a crash) would have the session read interrupted while its
// caller steps it, and a replica resuming those would run it as a team.
func TestAStepDrivenFinalizeTakesNoRunLease(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	bothAnswered(t, h.Service, sc, s.ID)
	ctx := context.Background()
	if _, err := h.Service.Finalize(ctx, s.ID, ""); err != nil {
		t.Fatal(err)
	}
	if l, err := h.Store.ReadRun(ctx, s.ID); err != nil || l != nil {
		t.Fatalf("a step-driven session's run lease after its Finalize: %+v, %v; want none", l, err)
	}
}

// TestAJoinedStepWedgedElsewhereIsGivenUp: a step of an agent whose step
// lock another process holds and never lets go (its step wedged, its lock
// still renewed) waits at most the step timeout and two lease TTLs, then
// is told the agent is busy, rather than waiting for ever.
func TestAJoinedStepWedgedElsewhereIsGivenUp(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.NewWith(t, provs, coordination.Options{RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 100 * time.Millisecond})
	timeout := 0.2
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{StepTimeoutSeconds: timeout}})
	ctx := context.Background()
	lock, err := h.Store.LockStep(ctx, s.ID, "agent_a") // the other process's, never released
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	t0 := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a step joined to a wedged one still waited after 5 s")
	}
	waited := time.Since(t0)
	if !errors.Is(err, coordination.ErrAgentBusy) {
		t.Fatalf("a step joined to a wedged one = %v, want ErrAgentBusy", err)
	}
	if waited < 300*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("gave up after %v, want the step timeout and two TTLs (0.4 s), give or take a poll", waited)
	}
	t.Logf("gave up after %v: %v", waited.Round(time.Millisecond), err)
}

// TestAFinalizeWhoseStrategyCameTooLateSaysSo: a second Finalize asking for
// synthesize while the first writes a present answer gets the first's
// answer, and its note says the synthesize it asked for was not what was
// written. Before, the result read as if it were.
func TestAFinalizeWhoseStrategyCameTooLateSaysSo(t *testing.T) {
	h, s, first := finalizingStepTeam(t, 500*time.Millisecond)
	ctx := context.Background()
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	res, err := other.Finalize(ctx, s.ID, coordination.FinalSynthesize)
	if err != nil {
		t.Fatalf("the second Finalize: %v", err)
	}
	if res.FinalAnswer == nil || *res.FinalAnswer != "FINAL" {
		t.Fatalf("the second Finalize returned %s, want the first's answer", coordtest.JSON(res))
	}
	if !strings.Contains(res.FinalNote, "synthesize was asked for") || !strings.Contains(res.FinalNote, "present") {
		t.Fatalf("the second Finalize's note is %q; want it to say its synthesize came after the session was being finalized with present", res.FinalNote)
	}
	if mine := <-first; mine.err != nil || mine.res == nil || strings.Contains(mine.res.FinalNote, "asked for") {
		t.Fatalf("the first Finalize: %v, %+v; want its own result, without the second's note", mine.err, mine.res)
	}
	if v, err := h.Service.Status(ctx, s.ID); err != nil || strings.Contains(v.Result.FinalNote, "asked for") {
		t.Fatalf("the note was stored with the session (%v): %q; it is the second call's alone", err, v.Result.FinalNote)
	}
}

// TestAFinalizeAskedAgainGetsTheFirstsAnswer: finalize_team asked again
// after the first finished the session (its answer lost to the caller, or
// the retry sent to another replica) returns the same result, here and on
// another service of the store, and says so if it asks for another
// strategy; a session that ended by itself is still refused.
func TestAFinalizeAskedAgainGetsTheFirstsAnswer(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	presenting(provs, func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		return coordtest.Answer("FINAL"), providers.Usage{}, nil
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	bothAnswered(t, h.Service, sc, s.ID)
	ctx := context.Background()
	first, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil || first.FinalAnswer == nil || *first.FinalAnswer != "FINAL" {
		t.Fatalf("the first Finalize: %v, %s", err, coordtest.JSON(first))
	}
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	for name, svc := range map[string]*coordination.Service{"here": h.Service, "another service": other} {
		again, err := svc.Finalize(ctx, s.ID, "")
		if err != nil {
			t.Fatalf("%s: Finalize again: %v; want the first's result", name, err)
		}
		if again.Status != first.Status || again.FinalAnswer == nil || *again.FinalAnswer != "FINAL" || again.FinalNote != first.FinalNote {
			t.Fatalf("%s: Finalize again returned %s, want the first's %s", name, coordtest.JSON(again), coordtest.JSON(first))
		}
	}
	late, err := other.Finalize(ctx, s.ID, coordination.FinalSynthesize)
	if err != nil || !strings.Contains(late.FinalNote, "synthesize was asked for") || !strings.Contains(late.FinalNote, "present") {
		t.Fatalf("Finalize again asking for synthesize: %v, note %q; want the first's answer, noted", err, late.FinalNote)
	}

	// Ended by its own agreement (whose stop reason a Finalize that wrote a
	// decided session's answer keeps): its result too.
	done := h.Create(coordination.TeamSpec{Models: models})
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote("agent1")}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote("agent1")}
	ran := h.Run(done.ID)
	if ran.Status != coordination.StatusFinished {
		t.Fatalf("the run: %s", coordtest.JSON(ran))
	}
	if res, err := other.Finalize(ctx, done.ID, ""); err != nil || res.Status != ran.Status || coordination.Deref(res.StopReason) != coordination.Deref(ran.StopReason) {
		t.Fatalf("Finalize of a session that ended by agreement: %v, %s; want its result", err, coordtest.JSON(res))
	}
}

// finalizedFirst is the outcome of the first Finalize of finalizingStepTeam.
type finalizedFirst struct {
	res *coordination.TeamResult
	err error
}

// finalizingStepTeam is a step-driven two-agent present team both of whose
// agents answered, and a first Finalize of it in flight: it returns once
// that Finalize's final call has begun (it takes call, then answers
// "FINAL"); first has the Finalize's outcome.
func finalizingStepTeam(t *testing.T, call time.Duration) (h *coordtest.Harness, s *coordination.Session, first chan finalizedFirst) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 2)
	presenting(provs, func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		inFinal <- struct{}{}
		time.Sleep(call)
		return coordtest.Answer("FINAL"), providers.Usage{}, nil
	})
	h = coordtest.New(t, provs)
	s = h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	bothAnswered(t, h.Service, sc, s.ID)
	first = make(chan finalizedFirst, 1)
	go func() {
		res, err := h.Service.Finalize(context.Background(), s.ID, "")
		first <- finalizedFirst{res, err}
	}()
	<-inFinal
	return h, s, first
}
