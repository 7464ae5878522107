package claudecode

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A workflow server that is slow to start (a loaded machine, a race-built
// binary) must still be connected before Claude Code's first request: Claude
// Code waits only MCP_CONNECT_TIMEOUT_MS (5 s by default) for its MCP servers
// and then begins its turn without their tools, so the agent could neither
// answer nor vote. The relay here starts 7 s late.
func TestRealClaudeWaitsForAWorkflowServerThatIsSlowToStart(t *testing.T) {
	h := newRealServing(t, cliagent.Plain{}, clitest.SlowRelay(7*time.Second))
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"17 * 23 = 391"}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	act, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2")))
	h.calls(t)
	var first *fake.Call
	for _, c := range h.script.Calls() {
		if c.Model == "claude-opus-4-6" {
			first = &c
			break
		}
	}
	if first == nil {
		t.Fatalf("claude never called the API for its turn: %v", err)
	}
	if !slices.Contains(first.Tools, "mcp__workflow__new_answer") {
		t.Fatalf("claude's first request offered %d tools, none of them the workflow server's: it began its turn before the server connected (%v)", len(first.Tools), first.Tools)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
}
