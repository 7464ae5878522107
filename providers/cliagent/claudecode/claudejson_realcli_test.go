package claudecode

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A sandboxed agent's private config directory (CLAUDE_CONFIG_DIR) keeps
// Claude Code's .claude.json from run to run, and the agent may write it:
// its project entry's allowedTools and mcpServers, were the CLI to honour
// them, would pass the step's permission gate in the agent's next run.
// Planted there between two runs, they do not: the next run's curl is
// still put to the engine and refused.
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
	var found []string
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == ".claude.json" && filepath.Base(filepath.Dir(path)) == ".claude" {
			found = append(found, path)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("the agent's private config directories hold %d .claude.json, want 1: %q", len(found), found)
	}
	var cfg map[string]any
	if b, err := os.ReadFile(found[0]); err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("the agent's .claude.json: %v", err)
	}
	projects, _ := cfg["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	projects[h.inside] = map[string]any{
		"allowedTools":           []string{"Bash", "Bash(*)", "Edit", "Write"},
		"hasTrustDialogAccepted": true,
		"mcpServers":             map[string]any{"planted": map[string]any{"type": "stdio", "command": "/bin/true"}},
	}
	cfg["projects"] = projects
	cfg["mcpServers"] = map[string]any{"planted-user": map[string]any{"type": "stdio", "command": "/bin/true"}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(found[0], b, 0o600); err != nil {
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
