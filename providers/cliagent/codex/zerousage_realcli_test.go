package codex

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestRealCodexAgainstAServerReportingZeroUsageIsChargedAnEstimate: Codex
// pointed at an OpenAI-compatible server that reports every count as zero
// (as local servers often do) still ran a model on its prompt and wrote its
// answer; the step is charged an estimate of both, marked so, or no token or
// cost budget would ever bind against it.
func TestRealCodexAgainstAServerReportingZeroUsageIsChargedAnEstimate(t *testing.T) {
	h := newReal(t, nil)
	zero := &fake.Usage{Zero: true}
	h.script.SetOwnUsage(*zero) // its tool search and its final message too
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}, Usage: zero},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 391; see answer.txt", Usage: zero},
	)
	req := h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2"))
	act, u, err := h.step(t, 120*time.Second, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	t.Logf("charged %d in / %d out, estimated %v, %s", u.Input, u.Output, u.CostEstimated, clitest.Cost(u))
	if floor := providers.EstimateTokens(len(req.System) + len(req.Prompt)); u.Input < floor || u.Output == 0 || !u.CostEstimated {
		t.Fatalf("usage = %+v: want an estimate of at least %d input tokens (the prompt it was sent) and of the output it wrote, marked cost_estimated", u, floor)
	}
}
