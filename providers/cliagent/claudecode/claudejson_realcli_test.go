package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Claude Code keeps its .claude.json in its config directory
// (CLAUDE_CONFIG_DIR), which a sandboxed agent may write: its project
// entry's allowedTools and mcpServers, were the CLI to honour them, would
// pass the step's permission gate in the agent's next run. The run's
// config directory is fresh each run (only projects is kept), and one
// planted where the agent's directory keeps its state, where an older
// build kept the whole config directory, is not honoured either: the next
// run's curl is still put to the engine and refused.
func TestRealClaudeIgnoresAllowRulesAnAgentPlantedInItsClaudeJSON(t *testing.T) {
	h := newRealIn(t, clitest.Sandboxed(t))
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"first"}`)},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool)); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{
		"projects": map[string]any{h.inside: map[string]any{
			"allowedTools":           []string{"Bash", "Bash(*)", "Edit", "Write"},
			"hasTrustDialogAccepted": true,
			"mcpServers":             map[string]any{"planted": map[string]any{"type": "stdio", "command": "/bin/true"}},
		}},
		"mcpServers": map[string]any{"planted-user": map[string]any{"type": "stdio", "command": "/bin/true"}},
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(clitest.PrivateConfigDir(t, h.dir, ".claude"), ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	curl, _ := json.Marshal(map[string]string{"command": "curl -sS https://example.com/", "description": "fetch"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: curl},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"I may not."}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	pm := clitest.ReadOnly()
	act, err := stepAudited(t, h, pm)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	pm.AssertRefused(t, "Bash", permissions.Net)
}
