package coordination_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAFinalCallIsBoundByMaxToolCallsPerStep: the session's
// max_tool_calls_per_step of 3 binds its final call as it binds a step, so
// a CLI writer (which counts its tool calls against Request.ToolCallLimit)
// is stopped at 3. Before, the present call's request carried none, and a
// CLI writer had providers.DefaultMaxToolCalls (40).
func TestAFinalCallIsBoundByMaxToolCallsPerStep(t *testing.T) {
	var limit atomic.Int64
	p := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose == providers.PurposePresent {
			limit.Store(int64(req.ToolCallLimit()))
			return coordtest.Answer("FINAL"), providers.Free(), nil
		}
		return coordtest.Answer("Answer: 4 from " + req.AgentID), providers.Free(), nil
	})
	h := coordtest.New(t, map[string]providers.Provider{"sim": p})
	// Step-driven and finalized after one answer: a run of this fake, which
	// never votes, ends by its agents' drops in an order the scheduler picks,
	// and with the winner dropped no present call is made (it failed so in
	// 2 of 5 runs under -race).
	s := h.Create(coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep,
		Rules: coordination.Rules{Final: coordination.FinalPresent, MaxToolCallsPerStep: 3}})
	ctx := context.Background()
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	res, err := h.Service.Finalize(ctx, s.ID, coordination.FinalPresent)
	if err != nil {
		t.Fatal(err)
	}
	if coordination.Deref(res.FinalAnswer) != "FINAL" {
		t.Fatalf("want the present call made: %s", coordtest.JSON(res))
	}
	if n := limit.Load(); n != 3 {
		t.Errorf("the present call's tool call limit is %d; want the session's max_tool_calls_per_step, 3", n)
	}
}
