package coordination_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// stalledCall is a model whose call says it began, then waits for its
// context, up to an hour, reporting what it spent so far ($0.05, 1,000
// tokens) when stopped, and when it stopped.
func stalledCall(began chan<- struct{}, stopped chan<- time.Time) providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		began <- struct{}{}
		cost := 0.05
		select {
		case <-ctx.Done():
			stopped <- time.Now()
			return providers.Action{}, providers.Usage{Input: 900, Output: 100, CostUSD: &cost}, ctx.Err()
		case <-time.After(time.Hour):
			return coordtest.Answer("4"), providers.Usage{}, nil
		}
	})
}

// stepAsync steps agent_a of session id through svc in the background;
// the channel gets Step's error once it returns.
func stepAsync(svc *coordination.Service, id string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := svc.Step(context.Background(), coordination.StepRequest{SessionID: id, AgentID: "agent_a"})
		done <- err
	}()
	return done
}

// cancelledCallSpend is the spend the session log records for cancelled
// model calls.
func cancelledCallSpend(t *testing.T, l *coordination.Ledger) (cost float64, tokens int64) {
	t.Helper()
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage && e.Usage != nil && strings.Contains(e.Reason, "cancelled call") {
			tokens += e.Usage.Tokens()
			if e.Usage.CostUSD != nil {
				cost += *e.Usage.CostUSD
			}
		}
	}
	return cost, tokens
}

// TestAStepDrivenStepsCallStopsWhenABudgetStopIsDecidedElsewhere: agent_a's
// step of a step-driven session runs its model call on replica A; agent_b's
// step lands on replica B sharing the store, past the $1 budget, and B's
// landing ends the session by budget. A's call is stopped within a second,
// its $0.05 recorded as a cancelled call's and counted in the finished
// result, and the step is refused as the session's end refuses any. Before,
// A heard only cancels: its call ran on (up to step_timeout_seconds, 600 s
// by default), paid for after the session had stopped counting.
func TestAStepDrivenStepsCallStopsWhenABudgetStopIsDecidedElsewhere(t *testing.T) {
	st := memstore.New()
	budgetStopElsewhere(t, st, st)
}

// budgetStopElsewhere is that case with replica A on store a and B on b.
func budgetStopElsewhere(t *testing.T, a, b coordination.Store) {
	models, _, provs := coordtest.Team(t, 2)
	began, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
	provs[models[0]] = stalledCall(began, stopped)
	provs[models[1]] = providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		cost := 2.0
		return coordtest.Answer("5"), providers.Usage{Input: 100, Output: 10, CostUSD: &cost}, nil
	})
	open := func(sp providers.Spec) (providers.Provider, error) { return provs[sp.String()], nil }
	svcA := coordination.NewService(a, coordination.Options{Logger: zerolog.Nop(), Open: open})
	svcB := coordination.NewService(b, coordination.Options{Logger: zerolog.Nop(), Open: open})
	ctx := context.Background()
	seed := int64(1)
	s, err := svcA.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Seed: &seed, Models: models, Driver: coordination.DriverStep,
		Rules: coordination.Rules{CostBudgetUSD: new(1.0)}})
	if err != nil {
		t.Fatal(err)
	}
	done := stepAsync(svcA, s.ID)
	<-began
	t0 := time.Now()
	if _, err := svcB.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-stopped:
		t.Logf("the call stopped %v after the budget stop", at.Sub(t0).Round(time.Millisecond))
	case <-time.After(time.Second):
		t.Fatal("agent_a's model call still ran a second after another replica's landing ended the session by budget")
	}
	var fin *coordination.FinishedError
	if err := <-done; !errors.As(err, &fin) || fin.Stop != coordination.StopBudget {
		t.Fatalf("the stopped step returned %v; want the session's end (budget)", err)
	}
	res, err := svcB.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-2.05) > 1e-9 {
		t.Errorf("the finished result's cost: %v; want $2.05 (agent_b's step and agent_a's stopped call)", res.CostUSD)
	}
	l, err := b.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cost, _ := cancelledCallSpend(t, l); math.Abs(cost-0.05) > 1e-9 {
		t.Errorf("the stopped call's spend recorded: $%.2f; want $0.05", cost)
	}
	if n := len(l.Agents["agent_a"]); n != 0 {
		t.Errorf("agent_a has %d steps recorded; want none (its call was stopped)", n)
	}
}

// TestAStepDrivenStepsCallStopsAtTheSessionsTimeout: a step-driven
// session's timeout passes while a step's model call runs. The call is
// stopped at the deadline, not at its step timeout; the session finishes by
// its timeout, counting the call's spend as a cancelled call's. Before, the
// session's timer decided the timeout and the call went on calling its model
// for up to step_timeout_seconds, landing after the end.
func TestAStepDrivenStepsCallStopsAtTheSessionsTimeout(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	began, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
	provs[models[0]] = stalledCall(began, stopped)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{TimeoutSeconds: 0.5}})
	ctx := context.Background()
	done := stepAsync(h.Service, s.ID)
	<-began
	select {
	case at := <-stopped:
		if late := at.Sub(s.CreatedAt) - 500*time.Millisecond; late > time.Second {
			t.Errorf("the call stopped %v past the session's deadline", late)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the model call still ran 5 s after the session's 0.5 s timeout")
	}
	var fin *coordination.FinishedError
	if err := <-done; !errors.As(err, &fin) || fin.Stop != coordination.StopTimeout {
		t.Fatalf("the stopped step returned %v; want the session's end (timeout)", err)
	}
	res, err := h.Service.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.Input+res.Usage.Output != 1000 {
		t.Errorf("the finished result's usage: %+v; want the stopped call's 1,000 tokens", res.Usage)
	}
}

// TestARunDrivenSessionSteppedAfterItsRunCountsItsTimeout: a run-driven
// session is stepped once its run ended (it was cancelled). Its timeout
// binds those steps as it binds a run: counted from the step that resumes
// it, as a run resumed counts its own from its start. A call in flight at
// that deadline is stopped there and the session finishes by its timeout;
// a step asked for past it is refused, the session decided by it. Before,
// overLimit checked the timeout of step-driven sessions only, and a
// run-driven one stepped had none.
func TestARunDrivenSessionSteppedAfterItsRunCountsItsTimeout(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	began, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
	provs[models[0]] = stalledCall(began, stopped)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{TimeoutSeconds: 0.5}})
	ctx := context.Background()
	if _, err := h.Service.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // past creation plus the timeout: the resume counts, not the creation
	t0 := time.Now()
	done := stepAsync(h.Service, s.ID)
	<-began
	select {
	case at := <-stopped:
		if ran := at.Sub(t0); ran < 400*time.Millisecond || ran > 1500*time.Millisecond {
			t.Errorf("the call stopped %v after the step that resumed the session began; want about its 0.5 s timeout", ran)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the model call still ran 5 s after the session's 0.5 s timeout")
	}
	var fin *coordination.FinishedError
	if err := <-done; !errors.As(err, &fin) || fin.Stop != coordination.StopTimeout {
		t.Fatalf("the stopped step returned %v; want the session's end (timeout)", err)
	}

	// Past the deadline with nothing in flight: the next step decides it.
	s2 := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{TimeoutSeconds: 0.2}})
	time.Sleep(300 * time.Millisecond)
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s2.ID, AgentID: "agent_b"}); !errors.As(err, &fin) || fin.Stop != coordination.StopTimeout {
		t.Fatalf("a step of a run-driven session never run, past its creation plus its timeout: %v; want the session ended by its timeout", err)
	}
	if res, err := h.Service.Result(ctx, s2.ID); err != nil || res.Status != coordination.StatusFailed || coordination.Deref(res.StopReason) != coordination.StopTimeout {
		t.Fatalf("the session after that step: %+v, %v; want it ended by its timeout, with no answer (failed)", res, err)
	}
}

// TestAStepOfASessionWhoseRunDiedHasWhatTheRunHadLeft: a run-driven
// session whose run died (its lease expired unreleased: interrupted) is
// stepped past its creation plus its timeout. Its run had used almost none
// of it, and a resume would count only the time its runs ran, so the step
// is not refused: its call has what the run had left, and is stopped there.
// Before, the step ended the session by a timeout its run never met.
func TestAStepOfASessionWhoseRunDiedHasWhatTheRunHadLeft(t *testing.T) {
	h, s, began, stopped := sessionWhoseRunDied(t, 0.5, 600*time.Millisecond)
	t0 := time.Now()
	done := stepAsync(h.Service, s.ID)
	select {
	case <-began:
	case err := <-done:
		t.Fatalf("the step of a session whose run died having used none of its timeout was refused: %v", err)
	}
	select {
	case at := <-stopped:
		if ran := at.Sub(t0); ran < 300*time.Millisecond || ran > 1500*time.Millisecond {
			t.Errorf("the call stopped %v after the step began; want about the 0.5 s the run had left", ran)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the model call still ran 5 s after the time the run had left")
	}
	<-done
}

// TestStepsOfASessionWhoseRunDiedShareWhatTheRunHadLeft: the time a dead
// run had left counts from the first step taken outside it, not afresh
// for each step: a second step has only what the first left.
func TestStepsOfASessionWhoseRunDiedShareWhatTheRunHadLeft(t *testing.T) {
	h, s, began, stopped := sessionWhoseRunDied(t, 1, 1100*time.Millisecond)
	ctx := context.Background()
	first := time.Now()
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Fatalf("the first step after the run died: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	done := stepAsync(h.Service, s.ID)
	<-began
	select {
	case at := <-stopped:
		if ran := at.Sub(t0); ran > 900*time.Millisecond {
			t.Errorf("the second step's call ran %v; want what the first left of the run's 1 s (about %v)", ran, time.Second-t0.Sub(first))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second step's call still ran 5 s after the time the run had left")
	}
	<-done
}

// sessionWhoseRunDied is a run-driven session of timeout seconds whose run
// claimed it and died at once (its lease ran out unreleased), after wait
// (past its creation plus its timeout); agent_a's model call stalls until
// stopped, telling began and stopped.
func sessionWhoseRunDied(t *testing.T, timeout float64, wait time.Duration) (*coordtest.Harness, *coordination.Session, chan struct{}, chan time.Time) {
	t.Helper()
	models, _, provs := coordtest.Team(t, 2)
	began, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
	provs[models[0]] = stalledCall(began, stopped)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{TimeoutSeconds: timeout}})
	if _, err := h.Store.AcquireRun(context.Background(), s.ID, coordination.ThisProcess("a run that dies"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	return h, s, began, stopped
}
