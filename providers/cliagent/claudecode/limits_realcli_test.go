package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// loopOnReads scripts the fake model to answer every turn with another
// Read of a file in the workspace, at 10,000 input and 500 output tokens a
// turn ($0.0625 at claude-opus-4-6's prices).
func loopOnReads(t *testing.T, h *realHarness) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("17 * 23\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, "notes.txt")})
	h.script.Always("claude-opus-4-6", fake.Reply{Kind: fake.ReplyToolCall, Tool: "Read", Input: input,
		Usage: &fake.Usage{Input: 10000, Output: 500}})
}

func TestRealClaudeLoopingOnToolsIsStoppedPastItsToolCallLimit(t *testing.T) {
	h := newReal(t)
	loopOnReads(t, h)
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 5
	start := time.Now()
	_, u, err := clitest.Step(t, h.p, func() []fake.Call { return nil }, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassToolCalls, u, true, h.rec)
	t.Logf("claude stopped after %d tool calls (limit 5), %d model calls, %s, in %v: %v", n, len(h.script.Calls()), clitest.Cost(u), time.Since(start).Round(time.Millisecond), err)
	clitest.AssertPastTheToolLimit(t, n, req.MaxToolCalls)
	clitest.AssertNoProcessIn(t, h.ws)
}

func TestRealClaudeLoopingIsStoppedWithinATurnOfTheSessionsBudget(t *testing.T) {
	h := newReal(t)
	loopOnReads(t, h)
	req := h.request(clitest.AnswerTool)
	budget := &clitest.Budget{Left: 0.30}
	req.Spend = budget
	_, u, err := clitest.Step(t, h.p, func() []fake.Call { return nil }, 120*time.Second, req)
	n := clitest.AssertStopped(t, err, providers.ClassBudget, u, true, h.rec)
	t.Logf("claude stopped after %d tool calls, %d model calls, %s against $0.30 left: %v", n, len(h.script.Calls()), clitest.Cost(u), err)
	clitest.AssertWithinCallsOfTheBudget(t, u, 0.30, 0.0625, 2) // a turn's output is priced late: two calls' grace
	clitest.AssertNoProcessIn(t, h.ws)
}

// TestRealClaudeLoopingAgainstAServerReportingZeroUsageIsStoppedByItsTokenBudget:
// a server that reports every count as zero leaves a looping run's usage
// unknown until it ends; the step's token budget binds mid-run on an
// estimate (the prompt once for each model call its stream shows, the
// bytes it wrote), and the step is charged at least what stopped it.
func TestRealClaudeLoopingAgainstAServerReportingZeroUsageIsStoppedByItsTokenBudget(t *testing.T) {
	h := newReal(t)
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("17 * 23\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, "notes.txt")})
	zero := fake.Usage{Zero: true}
	h.script.SetOwnUsage(zero)
	h.script.Always("claude-opus-4-6", fake.Reply{Kind: fake.ReplyToolCall, Tool: "Read", Input: input, Usage: &zero})
	req := h.request(clitest.AnswerTool)
	req.MaxToolCalls = 20
	req.TokenBudget = 1000
	start := time.Now()
	_, u, err := clitest.Step(t, h.p, func() []fake.Call { return nil }, 120*time.Second, req)
	n := len(h.rec.Tools)
	t.Logf("claude stopped after %d tool calls, %d model calls, %d in / %d out (estimated %v) against a budget of %d tokens, in %v: %v",
		n, len(h.script.Calls()), u.Input, u.Output, u.CostEstimated, req.TokenBudget, time.Since(start).Round(time.Millisecond), err)
	clitest.AssertStopped(t, err, providers.ClassBudget, u, true, h.rec)
	if n >= req.MaxToolCalls {
		t.Fatalf("%d tool calls ran, as many as the tool-call limit: the token budget did not bind", n)
	}
	if u.Tokens() < req.TokenBudget || !u.CostEstimated {
		t.Fatalf("charged %+v: want at least the %d tokens that stopped it, marked cost_estimated", u, req.TokenBudget)
	}
	clitest.AssertNoProcessIn(t, h.ws)
}
