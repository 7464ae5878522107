package coordtest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// StepJoined plays the rule "a step of an agent in flight elsewhere joins
// it" (docs/DESIGN.md, "Who drives") between two services, one over a and
// one over b, two stores of one shared record (two processes on one state
// directory, two replicas on one database) or one memory store. agent_a's
// step of a step-driven session runs on A; the same step asked of B (a
// client's retry that a load balancer sent elsewhere):
//   - waits for A's step and answers with it, one model call, one entry;
//   - runs the step itself when A's ends without landing (its caller left);
//   - ends its wait with the cancel when the session is cancelled, and
//     resumes nothing.
func StepJoined(t *testing.T, a, b coordination.Store) {
	// team is a step-driven two-agent team over a and b whose agent_a
	// model is first; the agents' other models answer at once.
	team := func(t *testing.T, first providers.Func) (onA, onB *coordination.Service, s *coordination.Session, calls *atomic.Int32) {
		calls = &atomic.Int32{}
		models, _, provs := Team(t, 2)
		provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if calls.Add(1) == 1 {
				return first(ctx, req)
			}
			return Answer("4"), providers.Usage{}, nil
		})
		h := &Harness{T: t, Providers: provs}
		onA = coordination.NewService(a, coordination.Options{Open: h.Open})
		onB = coordination.NewService(b, coordination.Options{Open: h.Open})
		h.Service = onA
		return onA, onB, h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep}), calls
	}
	type stepped struct {
		res *coordination.StepResult
		err error
	}
	step := func(ctx context.Context, svc *coordination.Service, id string) <-chan stepped {
		out := make(chan stepped, 1)
		go func() {
			res, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_a"})
			out <- stepped{res, err}
		}()
		return out
	}
	within := func(t *testing.T, ch <-chan stepped, what string) stepped {
		t.Helper()
		select {
		case got := <-ch:
			return got
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer within 10 s", what)
			return stepped{}
		}
	}
	ctx := context.Background()

	t.Run("the landing is the answer", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		svcA, svcB, s, calls := team(t, func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
			close(started)
			<-release
			return Answer("4"), providers.Usage{}, nil
		})
		onA := step(ctx, svcA, s.ID)
		wait(t, started, "A's model call")
		onB := step(ctx, svcB, s.ID)
		// Long enough for B's step to find A's in flight under a loaded
		// race run (at 200 ms, B once reached the lock after A's landing
		// and was told agent_a was not due).
		select {
		case got := <-onB:
			close(release)
			t.Fatalf("B answered while A's step was in flight: %+v, %v", got.res, got.err)
		case <-time.After(time.Second):
		}
		landed := time.Now()
		close(release)
		ga := within(t, onA, "A's step")
		gb := within(t, onB, "B's step")
		t.Logf("B answered %v after A's model replied", time.Since(landed).Round(time.Millisecond))
		if ga.err != nil || gb.err != nil {
			t.Fatalf("A's step: %v; B's: %v", ga.err, gb.err)
		}
		if gb.res.Label == "" || gb.res.Label != ga.res.Label || gb.res.Action != ga.res.Action {
			t.Errorf("B answered %s %q, A's step landed %s %q", gb.res.Action, gb.res.Label, ga.res.Action, ga.res.Label)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("agent_a's model was called %d times, want once", n)
		}
		l, err := a.Ledger(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(l.Agents["agent_a"]); n != 1 {
			t.Errorf("agent_a has %d steps recorded, want 1", n)
		}
	})

	t.Run("a retry naming where the step began gets it, in flight or landed", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		svcA, svcB, s, calls := team(t, func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
			close(started)
			<-release
			return Answer("4"), providers.Usage{}, nil
		})
		var began atomic.Int64
		began.Store(-1)
		onA := make(chan stepped, 1)
		go func() {
			res, err := svcA.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a", Began: func(n int) { began.Store(int64(n)) }})
			onA <- stepped{res, err}
		}()
		wait(t, started, "A's model call")
		after := int(began.Load())
		retry := func(svc *coordination.Service) <-chan stepped {
			out := make(chan stepped, 1)
			go func() {
				res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a", After: &after})
				out <- stepped{res, err}
			}()
			return out
		}
		// On the same service while in flight: joined, not refused.
		here := retry(svcA)
		close(release)
		ga := within(t, onA, "A's step")
		gh := within(t, here, "the retry on A")
		// On the other service once landed: the same step, not another.
		gb := within(t, retry(svcB), "the retry on B")
		if after != 0 || ga.err != nil || gh.err != nil || gb.err != nil {
			t.Fatalf("began after step %d; A's step: %v; the retries: %v, %v", after, ga.err, gh.err, gb.err)
		}
		if gh.res.Label != ga.res.Label || gb.res.Label != ga.res.Label {
			t.Errorf("the retries answered %q and %q, the step landed %q", gh.res.Label, gb.res.Label, ga.res.Label)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("agent_a's model was called %d times, want once", n)
		}
	})

	t.Run("a step that does not land is run by the joiner", func(t *testing.T) {
		started := make(chan struct{})
		svcA, svcB, s, calls := team(t, func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
			close(started)
			<-ctx.Done()
			return providers.Action{}, providers.Usage{}, ctx.Err()
		})
		actx, leave := context.WithCancel(ctx)
		onA := step(actx, svcA, s.ID)
		wait(t, started, "A's model call")
		onB := step(ctx, svcB, s.ID)
		time.Sleep(100 * time.Millisecond) // B waits (on a slow machine perhaps not yet: then it steps once A's has gone)
		leave()
		if got := within(t, onA, "A's step"); got.err == nil {
			t.Fatal("A's step, its caller gone, returned no error")
		}
		gb := within(t, onB, "B's step")
		if gb.err != nil {
			t.Fatalf("B's step: %v", gb.err)
		}
		if gb.res.Action != providers.ToolNewAnswer || calls.Load() != 2 {
			t.Errorf("B's step: %s after %d model calls, want an answer from the second", gb.res.Action, calls.Load())
		}
	})

	t.Run("a cancel ends the wait", func(t *testing.T) {
		started := make(chan struct{})
		svcA, svcB, s, _ := team(t, func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
			close(started)
			<-ctx.Done()
			return providers.Action{}, providers.Usage{}, ctx.Err()
		})
		onA := step(ctx, svcA, s.ID)
		wait(t, started, "A's model call")
		onB := step(ctx, svcB, s.ID)
		time.Sleep(100 * time.Millisecond)
		if _, err := svcA.Cancel(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		within(t, onA, "A's step")
		gb := within(t, onB, "B's step")
		if gb.err == nil || errors.Is(gb.err, coordination.ErrAgentBusy) {
			t.Fatalf("B's step of a session cancelled while it waited = %+v, %v; want the cancel", gb.res, gb.err)
		}
		t.Logf("B's step: %v", gb.err)
		v, err := svcB.Status(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Result.Status != coordination.StatusCancelled {
			t.Errorf("the session reads %s, want cancelled", v.Result.Status)
		}
		if n := entries(t, a, s.ID); n != 0 {
			t.Errorf("%d entries recorded, want none", n)
		}
	})
}
