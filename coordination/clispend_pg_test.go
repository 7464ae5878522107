package coordination_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestABudgetBindsCLIStepsInFlightOnTwoReplicas: a step-driven session's
// outer agent steps its two CLI agents at once, one through each replica.
// Each step's turns cost $0.02, 60 ms apart, and would loop for $4; the
// session's budget is $1. Each replica seeing only its own step would let
// each spend up to the budget ($2 in all); counted across replicas through
// the store, the two stop together within two turns each of $1 (a share
// runs beside the turns, so what a turn reads of the other replica's step
// may be a turn old). Turns 20 ms apart overshot to $1.10 once under the
// race detector on a loaded machine, a share's round trip there taking
// several turns; 60 ms gives it room and still makes some 50 turns.
func TestABudgetBindsCLIStepsInFlightOnTwoReplicas(t *testing.T) {
	const budget, turn = 1.0, 0.02
	a, b := pgReplicas(t, func(providers.Spec) (providers.Provider, error) {
		return loopingCLIEvery(turn, 60*time.Millisecond), nil
	})
	ctx := context.Background()
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, svc := range []*coordination.Service{a, b} {
		agent := s.Agents[i].ID
		wg.Go(func() {
			if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
				t.Errorf("the step of %s: %v", agent, err)
			}
		})
	}
	wg.Wait()
	res, err := b.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.CostUSD == nil {
		t.Fatalf("no cost in the result: %+v", res)
	}
	if limit := budget + 4*turn + 1e-9; *res.CostUSD > limit { // a sum of floats
		t.Errorf("the two steps spent $%.2f, more than the budget plus two turns each ($%.2f)", *res.CostUSD, limit)
	}
	t.Logf("two CLI steps on two replicas under a $%.2f budget spent $%.2f", budget, *res.CostUSD)
}
