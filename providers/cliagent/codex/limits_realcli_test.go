package codex

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestRealCodexLoopingOnCommandsIsStoppedPastItsToolCallLimit: the fake
// model answers every turn with another command. codex exec reports usage
// only when its turn ends, so here the tool-call limit is what binds
// mid-run; the budget is checked against each turn.completed.
func TestRealCodexLoopingOnCommandsIsStoppedPastItsToolCallLimit(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyShell, Content: "echo 391", Usage: &fake.Usage{Input: 10000, Output: 500}})
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 5
	req.Spend = &clitest.Budget{Left: 1000}
	start := time.Now()
	_, u, err := h.step(t, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassToolCalls, u, false, h.rec)
	t.Logf("codex stopped after %d tool calls (limit 5), %d API calls, %s, in %v: %v", n, len(h.script.Calls()), clitest.Cost(u), time.Since(start).Round(time.Millisecond), err)
	if n < 6 || n > 7 {
		t.Fatalf("%d tool calls ran, want the limit of 5 plus the one that passed it", n)
	}
	clitest.AssertNoProcessIn(t, h.ws)
}
