package codex

import (
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A workflow server that is slow to start (a loaded machine, a race-built
// binary) must still be connected before Codex's first request: Codex
// waits for an MCP server it is not told is required only a short grace,
// then begins its turn without the server's tools, so the agent can
// neither answer nor vote and the model call is paid for nothing (seen in
// CI: "no workflow tools to call"). The relay here starts 7 s late.
func TestRealCodexWaitsForAWorkflowServerThatIsSlowToStart(t *testing.T) {
	h := newRealRelayed(t, nil, clitest.SlowRelay(7*time.Second))
	h.script.Add(model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 391"})
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v: Codex began its turn before the workflow server connected", act)
	}
}
