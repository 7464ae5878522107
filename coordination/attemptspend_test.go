package coordination_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAnAttemptOfUnknownCostKeepsTheStepsKnownSpendInTheBudget: a step's
// first attempt spends a known $1 and makes no workflow call; its
// corrective retry is stopped before it told any usage (a CLI killed at its
// tool-call limit: its cost unknown, never a known zero). The session's
// cost_budget_usd of $0.90 is spent: the $1 the first attempt is known to
// have spent counts against it, not nothing because the step's total is
// not known. (A plain sum of the attempts made the step's cost unknown,
// which spend counts as nothing; the step keeps the known part, marked
// estimated: addAttempt.)
func TestAnAttemptOfUnknownCostKeepsTheStepsKnownSpendInTheBudget(t *testing.T) {
	var attempts atomic.Int32
	cli := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if attempts.Add(1) == 1 {
			one := 1.0
			return providers.Action{Text: "I think it is 391."}, providers.Usage{Input: 1000, Output: 100, CostUSD: &one}, nil
		}
		return providers.Action{}, providers.Usage{}, &providers.Error{Class: providers.ClassToolCalls, Message: "stopped: it made its 6th tool call"}
	})
	h := &coordtest.Harness{T: t, Providers: map[string]providers.Provider{"openai/gpt-5-mini": cli, "openai/gpt-5-nano": &coordtest.Scripted{}}}
	h.Service = coordination.NewService(memstore.New(), coordination.Options{Open: h.Open})
	budget := 0.90
	s := h.Create(coordination.TeamSpec{Task: "What is 17 * 23?", Driver: coordination.DriverStep, Models: []string{"openai/gpt-5-mini", "openai/gpt-5-nano"},
		Rules: coordination.Rules{CostBudgetUSD: &budget}})
	res, err := h.Service.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if err != nil {
		t.Fatal(err)
	}
	if n := attempts.Load(); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
	if res.Action != "error" {
		t.Fatalf("the step is %s, want an error entry: %s", res.Action, coordtest.JSON(res))
	}
	if !res.Finished || res.Result == nil || res.Result.StopReason == nil || *res.Result.StopReason != coordination.StopBudget {
		t.Fatalf("the session spent $1 (known) of its $0.90 budget and went on: %s", coordtest.JSON(res))
	}
}
