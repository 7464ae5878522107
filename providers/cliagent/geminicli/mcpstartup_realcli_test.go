package geminicli

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A workflow server that is slow to start (a loaded machine, a race-built
// binary) must still be connected before Gemini CLI's first request, or the
// agent could neither answer nor vote and the model call would be paid for
// nothing. Gemini CLI (0.61) discovers its MCP servers before its first
// request; Claude Code and Codex had to be told to (MCP_CONNECTION_NONBLOCKING,
// `required`). This keeps a later Gemini CLI from starting without them. The
// relay here starts 7 s late.
func TestRealGeminiWaitsForAWorkflowServerThatIsSlowToStart(t *testing.T) {
	h := newRealRelayed(t, nil, clitest.SlowRelay(7*time.Second))
	h.script.Add(model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 391"})
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v: Gemini CLI began its turn before the workflow server connected", act)
	}
}
