package coordination_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestLaunchesCountTheMeanStepNotItsWorstCase pins the launch rule's
// trade (affordable): once steps have landed, a launch counts each step in
// flight at the mean of those landed, not at a first step's worst case.
// Three agents at $3/$15 per million tokens (a first step's worst case
// about $0.13, a reply at 8,192 tokens) answer again and again, each step
// 2,000 tokens in and 1,600 out ($0.03), under $0.50: the run spends the
// budget to within a step, $0.48 in 16 steps, where counting the worst
// case stopped at $0.39 in 13 (22% of the budget unspent, the tail run one
// step at a time). When one reply in five runs to the 8,192 cap ($0.13)
// the overshoot stays within what the three steps in flight may cost
// beyond the mean ($0.53 to $0.56 of $0.50 measured, by the order the
// steps land in; the worst-case count spent
// $0.50).
func TestLaunchesCountTheMeanStepNotItsWorstCase(t *testing.T) {
	const model, budget = "sim:price_in=3:price_out=15", 0.50
	for _, tc := range []struct {
		name     string
		capEvery int64 // one reply in capEvery runs to 8,192 tokens; 0: none
		steps    int
		minSpent float64
	}{{"typical replies", 0, 16, 0.48}, {"one reply in five at the cap", 5, 0, 0}} {
		var n atomic.Int64
		p := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			i := n.Add(1)
			out := int64(1600)
			if tc.capEvery > 0 && i%tc.capEvery == 0 {
				out = 8192
			}
			c := 2000*3e-6 + float64(out)*15e-6
			return coordtest.Answer(fmt.Sprintf("Answer: %s %d", req.AgentID, i)), providers.Usage{Input: 2000, Output: out, CostUSD: &c}, nil
		})
		svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Parallel: 8, Open: func(providers.Spec) (providers.Provider, error) { return p, nil }})
		s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23? Explain.", Models: []string{model, model, model},
			Rules: coordination.Rules{CostBudgetUSD: new(budget), MaxAnswersPerAgent: 50, MaxRounds: 50}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Run(context.Background(), s.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d steps, $%.4f of $%.2f", tc.name, res.Steps, *res.CostUSD, budget)
		if res.StopReason == nil || *res.StopReason != coordination.StopBudget {
			t.Fatalf("%s: want the run ended by its budget: %s", tc.name, coordtest.JSON(res))
		}
		if tc.steps > 0 && (res.Steps != tc.steps || *res.CostUSD < tc.minSpent-1e-9) {
			t.Errorf("%s: %d steps, $%.4f; want %d steps and at least $%.2f: launches counting the mean leave no more than a step of the budget unspent", tc.name, res.Steps, *res.CostUSD, tc.steps, tc.minSpent)
		}
		// Three in flight, each at most a cap reply ($0.1290) beyond a
		// mean of at least a typical one ($0.03).
		if limit := budget + 3*(0.129-0.03) + 1e-9; *res.CostUSD > limit {
			t.Errorf("%s: $%.4f spent; want at most the budget plus what three steps in flight cost beyond the mean ($%.4f)", tc.name, *res.CostUSD, limit)
		}
	}
}
