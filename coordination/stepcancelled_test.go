package coordination_test

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACancelFromAnotherServiceStopsAStepDrivenStepsCall: a step-driven
// session's server step runs its model call on one service (replica A); a
// cancel is recorded through another sharing the store (replica B). A's
// call is stopped within a second. Before, nothing on A heard it (a
// step-driven session has no run loop): the call ran to its end, paid for,
// and only its landing was refused.
func TestACancelFromAnotherServiceStopsAStepDrivenStepsCall(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	started, stopped := make(chan struct{}), make(chan time.Time, 1)
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		close(started)
		select {
		case <-ctx.Done():
			stopped <- time.Now()
			return providers.Action{}, providers.Usage{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return coordtest.Answer("4"), providers.Usage{}, nil
		}
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	b := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		done <- err
	}()
	<-started
	t0 := time.Now()
	if _, err := b.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-stopped:
		t.Logf("the call stopped %v after the cancel", at.Sub(t0).Round(time.Millisecond))
	case <-time.After(time.Second):
		t.Fatal("the model call still ran a second after another service recorded a cancel")
	}
	err := <-done
	if err == nil {
		t.Fatal("the cancelled step returned no error")
	}
	t.Logf("the step returned: %v", err)
	l, _ := h.Store.Ledger(ctx, s.ID)
	if n := len(l.Agents["agent_a"]); n != 0 {
		t.Fatalf("agent_a has %d steps recorded after its step was cancelled", n)
	}
}
