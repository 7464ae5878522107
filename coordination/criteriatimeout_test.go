package coordination_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestASessionsCriteriaCallIsBoundByItsStepTimeout: a criteria call made
// for a session is paid on its behalf as a step is, so its
// step_timeout_seconds (0.2 s here) bounds it too: a model that never
// answers is given up on then, the request saying why. Before, the call had
// no deadline but its caller's, and waited here for the model's own 5 s.
func TestASessionsCriteriaCallIsBoundByItsStepTimeout(t *testing.T) {
	ctx := context.Background()
	hung := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose != providers.PurposeCriteria {
			return providers.Action{}, providers.Free(), nil
		}
		select {
		case <-ctx.Done():
			return providers.Action{}, providers.Free(), ctx.Err()
		case <-time.After(5 * time.Second):
			return providers.Action{}, providers.Free(), &providers.Error{Class: providers.ClassProvider, Message: "dummy: gave up"}
		}
	})
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return hung, nil }})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{StepTimeoutSeconds: 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: "sim", Count: 3})
	took := time.Since(began)
	t.Logf("the criteria call ended after %v: %v", took.Round(10*time.Millisecond), err)
	if took > 3*time.Second {
		t.Errorf("the criteria call took %v; want it given up on at the session's step_timeout_seconds of 0.2 s", took)
	}
	if err == nil || !strings.Contains(err.Error(), "step_timeout_seconds") {
		t.Errorf("the criteria call's error %v; want it to name step_timeout_seconds", err)
	}
}

// TestACriteriaCallForATeamNotCreatedYetSaysSoWhenItTimesOut: a criteria
// call for a team whose session does not exist yet (run --criteria auto)
// is bound by the team's step_timeout_seconds, and its error speaks of the
// team, not of a session that was never created, and of criteria written,
// not attached to nothing. Before, it read "took longer than the session's
// step_timeout_seconds …, so none were attached".
func TestACriteriaCallForATeamNotCreatedYetSaysSoWhenItTimesOut(t *testing.T) {
	ctx := context.Background()
	hung := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Free(), ctx.Err()
	})
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return hung, nil }})
	team := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"}, Rules: coordination.Rules{StepTimeoutSeconds: 0.2}}
	_, err := svc.Criteria(ctx, coordination.CriteriaRequest{Task: team.Task, Team: &team, Model: "sim", Count: 3})
	if err == nil {
		t.Fatal("the criteria call of a model that never answers succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "the team's step_timeout_seconds") || strings.Contains(msg, "session") || strings.Contains(msg, "attached") {
		t.Errorf("the criteria call's error: %q; want it to name the team's step_timeout_seconds and no session nor attach: none exists yet", msg)
	}
}
