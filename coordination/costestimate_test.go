package coordination_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACostEstimatedByOneAgentMarksItsTotalsAndTheTeams: a CLI agent on a
// subscription reports its cost at list prices, marked an estimate; the
// result says so for that agent and for the team, not for the others.
func TestACostEstimatedByOneAgentMarksItsTotalsAndTheTeams(t *testing.T) {
	cost := 0.25
	svc := coordination.NewService(memstore.New(), coordination.Options{
		Logger: zerolog.Nop(), Parallel: 1,
		Open: func(sp providers.Spec) (providers.Provider, error) {
			estimated := sp.Backend == "claude_code"
			return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				u := providers.Usage{Input: 100, Output: 10, CostUSD: &cost, CostEstimated: estimated}
				if len(req.VoteEnum) > 0 {
					return coordtest.Vote(req.VoteEnum[0]), u, nil
				}
				return coordtest.Answer("4 from " + sp.Backend), u, nil
			}), nil
		},
	})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"claude_code", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.CostEstimated || res.CostUSD == nil {
		t.Fatalf("the team's cost is part estimate: %+v", res)
	}
	for _, a := range res.Agents {
		if a.CostEstimated != (a.Model == "claude_code/claude-opus-4-6") {
			t.Errorf("agent %s (%s): cost_estimated %v", a.AgentID, a.Model, a.CostEstimated)
		}
	}
}
