package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestTheFinalCallsSpendIsTheWritersNotTheWinners: the winner, agent_a,
// was dropped after its answer, so the present call is written by the
// first live agent, agent_b, on agent_b's model. The call's spend is
// recorded as that agent's (the usage entry names who spent, and the
// agents' rows count it), not as the dropped winner's, whose model was
// never called.
func TestTheFinalCallsSpendIsTheWritersNotTheWinners(t *testing.T) {
	var aCalls, bCalls atomic.Int32
	var bPresented atomic.Bool
	cost := func(c float64) providers.Usage { return providers.Usage{Input: 10, Output: 5, CostUSD: &c} }
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	var aliasA string
	provs := map[string]providers.Provider{
		a.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if aCalls.Add(1) == 1 {
				return coordtest.Answer("Answer: 4"), cost(0.01), nil
			}
			return providers.Action{}, cost(0), errors.New("scripted failure")
		}),
		b.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose == providers.PurposePresent {
				bPresented.Store(true)
				return coordtest.Answer("presented: 4"), cost(0.5), nil
			}
			if bCalls.Add(1) == 1 {
				return coordtest.Answer("Answer: four"), cost(0.01), nil
			}
			return coordtest.Vote(aliasA), cost(0.01), nil
		}),
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Rules: coordination.Rules{Final: coordination.FinalPresent},
		Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}}})
	aliasA = coordtest.Alias(s, "agent_a")
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b", "agent_b", "agent_a", "agent_a"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatalf("%s's step: %v", id, err)
		}
	}
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner == nil || res.Winner.AgentID != "agent_a" || len(res.Dropped) != 1 || !bPresented.Load() {
		t.Fatalf("the test needs the dropped agent_a to win and agent_b to write the final answer: %s", coordtest.JSON(res))
	}
	for _, e := range h.Ledger(s.ID).Session {
		if e.Kind == coordination.SessionUsage && e.Usage != nil && e.Usage.CostUSD != nil && *e.Usage.CostUSD == 0.5 {
			if len(e.Agents) != 1 || e.Agents[0] != "agent_b" {
				t.Errorf("the final call's spend is recorded as %v's; agent_b's model made it", e.Agents)
			}
		}
	}
	for _, row := range res.Agents {
		if row.AgentID == "agent_a" && row.CostUSD != nil && *row.CostUSD >= 0.5 {
			t.Errorf("agent_a's row counts the final call agent_b's model made: $%.2f", *row.CostUSD)
		}
	}
}
