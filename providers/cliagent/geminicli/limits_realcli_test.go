package geminicli

import (
	"fmt"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// TestRealGeminiLoopingOnWritesIsStoppedPastItsToolCallLimit: the fake
// model answers every turn with another write_file; the tool-call limit
// binds mid-run and the step keeps the usage of its calls (from the chat
// recording).
func TestRealGeminiLoopingOnWritesIsStoppedPastItsToolCallLimit(t *testing.T) {
	h := newReal(t, nil)
	// Each write differs: Gemini CLI's own loop detection ends a run that
	// repeats one call, and this model must keep going.
	for i := range 40 {
		h.script.Add(model, fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: fmt.Sprintf("notes%d.txt", i), Content: fmt.Sprintf("step %d\n", i)}},
			Usage: &fake.Usage{Input: 10000, Output: 500}})
	}
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 5
	req.Spend = &clitest.Budget{Left: 1000}
	start := time.Now()
	_, u, err := h.step(t, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassToolCalls, u, true, h.rec)
	t.Logf("gemini stopped after %d tool calls (limit 5), %d API calls, %s, in %v: %v", n, len(h.script.Calls()), clitest.Cost(u), time.Since(start).Round(time.Millisecond), err)
	clitest.AssertPastTheToolLimit(t, n, req.MaxToolCalls)
	clitest.AssertNoProcessIn(t, h.ws)
}

// TestRealGeminiLoopingIsStoppedWithinACallOfTheSessionsBudget: Gemini CLI
// reports usage only in its result, but its chat recording holds each
// model message's tokens as soon as the response is in; tailed, the
// session's budget binds within one model call of being reached instead of
// when the run ends.
func TestRealGeminiLoopingIsStoppedWithinACallOfTheSessionsBudget(t *testing.T) {
	h := newReal(t, nil)
	perCall := fake.Usage{Input: 10000, Output: 500}
	for i := range 40 {
		h.script.Add(model, fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: fmt.Sprintf("notes%d.txt", i), Content: fmt.Sprintf("step %d\n", i)}},
			Usage: &perCall})
	}
	call := *pricing.Cost(info.PriceBackend, model, providers.Usage{Input: perCall.Input, Output: perCall.Output})
	left := 2.5 * call // reached at the third write's model call
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 40
	req.Spend = &clitest.Budget{Left: left}
	start := time.Now()
	_, u, err := h.step(t, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassBudget, u, true, h.rec)
	t.Logf("gemini stopped after %d tool calls, %d API calls, %s against $%.4f left (a call $%.4f), in %v: %v", n, len(h.script.Calls()), clitest.Cost(u), left, call, time.Since(start).Round(time.Millisecond), err)
	clitest.AssertWithinCallsOfTheBudget(t, u, left, call, 1)
	clitest.AssertNoProcessIn(t, h.ws)
}
