package codex

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// TestRealCodexLoopingOnCommandsIsStoppedPastItsToolCallLimit: the fake
// model answers every turn with another command. The tool-call limit binds
// mid-run, and the step keeps the usage of the calls it made (from the
// session's rollout file: codex exec reports usage only when its turn ends).
func TestRealCodexLoopingOnCommandsIsStoppedPastItsToolCallLimit(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyShell, Content: "echo 391", Usage: &fake.Usage{Input: 10000, Output: 500}})
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 5
	req.Spend = &clitest.Budget{Left: 1000}
	start := time.Now()
	_, u, err := h.step(t, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassToolCalls, u, true, h.rec)
	t.Logf("codex stopped after %d tool calls (limit 5), %d API calls, %s, in %v: %v", n, len(h.script.Calls()), clitest.Cost(u), time.Since(start).Round(time.Millisecond), err)
	clitest.AssertPastTheToolLimit(t, n, req.MaxToolCalls)
	clitest.AssertNoProcessIn(t, h.ws)
}

// TestRealCodexLoopingIsStoppedWithinACallOfTheSessionsBudget: codex exec
// reports usage only at turn.completed, but its rollout file records each
// model response's tokens; tailed, the session's budget binds within one
// model call of being reached instead of when the turn ends.
func TestRealCodexLoopingIsStoppedWithinACallOfTheSessionsBudget(t *testing.T) {
	h := newReal(t, nil)
	perCall := fake.Usage{Input: 10000, Output: 500}
	h.script.Always(model, fake.Reply{Kind: fake.ReplyShell, Content: "echo 391", Usage: &perCall})
	call := *pricing.Cost("openai", model, providers.Usage{Input: perCall.Input, Output: perCall.Output})
	left := 2.5 * call // reached at the third command's model call
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 40
	req.Spend = &clitest.Budget{Left: left}
	start := time.Now()
	_, u, err := h.step(t, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassBudget, u, true, h.rec)
	t.Logf("codex stopped after %d tool calls, %d API calls, %s against $%.4f left (a call $%.4f), in %v: %v", n, len(h.script.Calls()), clitest.Cost(u), left, call, time.Since(start).Round(time.Millisecond), err)
	clitest.AssertWithinCallsOfTheBudget(t, u, left, call, 1)
	clitest.AssertNoProcessIn(t, h.ws)
}
