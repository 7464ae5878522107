package codex

import (
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

// writeHooks writes a hooks.json in dir whose SessionStart and PreToolUse
// hooks run command, as Codex 0.171 reads one beside a config layer's
// config.toml (CODEX_HOME/hooks.json for the user's).
func writeHooks(t *testing.T, dir, command string) {
	t.Helper()
	group := []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 10}}}}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionStart": group, "PreToolUse": group}})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hooks.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Codex 0.171 runs the hooks of CODEX_HOME/hooks.json (and of the plugins
// in CODEX_HOME/plugins) outside its own sandbox, and a run with the
// step's rules passes --dangerously-bypass-hook-trust (the step writes its
// own PreToolUse hook), which skips the trust review of every hook, not
// only ours. A sandboxed agent's CODEX_HOME is its private directory: a
// hooks.json it planted there between two runs must not run in the next,
// whose curl is still put to the engine and refused.
func TestRealCodexRunsNoHookAnAgentPlantedInItsConfigDir(t *testing.T) {
	h := newReal(t, clitest.Sandboxed(t))
	// The user's own hooks.json, shown read-only, still runs (with the
	// step's rules, whose bypass skips its trust review too).
	writeHooks(t, filepath.Join(h.home, ".codex"), `touch "$CODEX_HOME/sessions/users-hook-ran"`)
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyShell, Content: `mkdir -p "$CODEX_HOME/hooks" "$CODEX_HOME/plugins/cache" && echo x > "$CODEX_HOME/hooks/planted-by-agent"; echo x > "$CODEX_HOME/plugins/cache/planted-by-agent"; echo done`},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "first"},
	)
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	var private string
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == "planted-by-agent" {
			t.Errorf("the agent wrote %s, a directory Codex loads hooks from", path)
		}
		if d.IsDir() && d.Name() == ".codex" && filepath.Base(filepath.Dir(path)) == "home" {
			private = path
		}
		return nil
	})
	if private == "" {
		t.Fatalf("no private config directory under %s", h.dir)
	}

	// What an agent could have left there had its write gone through (its
	// shell runs in Codex's own sandbox, which keeps CODEX_HOME read-only;
	// a hook, a plugin's MCP server or a later mode need not).
	writeHooks(t, private, `touch "$CODEX_HOME/planted-hook-ran" "$CODEX_HOME/sessions/planted-hook-ran"`)
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyShell, Content: "curl -sS https://example.com/"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "I may not."},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	pm := clitest.ReadOnly()
	req := h.request(clitest.AnswerTool)
	req.Permits = pm
	req.StepNumber = 2
	act, _, err = h.step(t, 180*time.Second, req)
	t.Logf("audit:\n%s", pm.Lines())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	users := false
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "planted-hook-ran" {
			t.Errorf("the hook the agent planted in its config directory ran (%s)", path)
		}
		users = users || (err == nil && d.Name() == "users-hook-ran")
		return nil
	})
	if !users {
		t.Errorf("the user's own hooks.json did not run: the probe sees no hook of CODEX_HOME")
	}
	refused := false
	for _, r := range pm.Records() {
		refused = refused || (r.Action.Kind == permissions.Net && r.Action.Target == "example.com" && !r.Outcome.Ran())
	}
	if !refused {
		t.Errorf("no refused net(example.com) in the audit: the engine did not judge the curl")
	}
}
