package coordination_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// loopingAPI plays an API agent whose model asks for a tool every turn,
// through the real tool loop (providers.RunLoop) as the adapters run it:
// each turn costs turnCost and 1,100 tokens, priced as the adapters price
// a loop's turns. Unstopped, it answers in its turns-th turn. hold, if
// set, is called before each turn with the turn's number (1 first), to
// hold the step there.
func loopingAPI(turnCost float64, turns int, hold func(ctx context.Context, turn int)) providers.Provider {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Toolbox == nil {
			req.Toolbox = box // the session keeps no files: the model's own tools
		}
		return providers.RunLoop(ctx, req, func(ctx context.Context, req providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
			if hold != nil {
				hold(ctx, len(past)+1)
			}
			c := turnCost
			u := providers.Usage{Input: 1000, Output: 100, CostUSD: &c}
			if err := ctx.Err(); err != nil {
				return providers.Action{}, nil, u, err
			}
			if len(past)+1 >= turns {
				return coordtest.Answer("Answer: looped"), nil, u, nil
			}
			return coordtest.Act(providers.ToolCall{Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}), []string{"call"}, u, nil
		})
	})
}

// TestABudgetEndsARunOfLoopingAPIAgentsWithinATurnEach: two API agents
// whose tool loops would go on at $0.05 a turn for as long as they may,
// under a $1 budget, both in flight at once. Each loop reports its spend after every
// turn that asked for tools and stops once the session's — the ledger and
// both steps in flight — meets the budget, so the run ends within a turn
// per agent of it, its steps landed as budget failures (or cancelled in
// flight by the budget's stop). Before, only the step's own limits (its
// 40 tool calls, its token budget) stopped an API agent's loop: this run
// spent $2.15 of its $1.
func TestABudgetEndsARunOfLoopingAPIAgentsWithinATurnEach(t *testing.T) {
	const budget, turn = 1.0, 0.05
	p := loopingAPI(turn, 200, nil)
	h := coordtest.New(t, map[string]providers.Provider{"openai/gpt-5-mini": p, "openai/gpt-5-nano": p})
	s := h.Create(coordination.TeamSpec{Models: []string{"openai/gpt-5-mini", "openai/gpt-5-nano"}, Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	res := h.Run(s.ID)
	if coordination.Deref(res.StopReason) != coordination.StopBudget {
		t.Fatalf("want the run ended by its budget: %s", coordtest.JSON(res))
	}
	if res.CostUSD == nil || *res.CostUSD < budget || *res.CostUSD > budget+2*turn+1e-9 {
		t.Fatalf("spent $%.4f; want the budget met and at most a turn per agent past it ($%.2f)", dollars(res.CostUSD), budget+2*turn)
	}
	landed := 0
	for agent, entries := range h.Ledger(s.ID).Agents {
		for _, e := range entries {
			if landed++; e.Class != providers.ClassBudget {
				t.Errorf("%s's step %d: %s; want it stopped by the budget", agent, e.Step, coordtest.JSON(e))
			}
		}
	}
	if landed == 0 {
		t.Error("no step landed; want the loops stopped mid-step, landed as budget failures")
	}
}

// dollars is a cost as a line shows it: -1 when unknown.
func dollars(c *float64) float64 {
	if c == nil {
		return -1
	}
	return *c
}
