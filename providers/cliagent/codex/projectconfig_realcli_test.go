package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Codex loads a project's .codex/config.toml (and its hooks and exec
// rules) only when the user's config.toml trusts the project. The agent
// may write its workspace's .codex, but not the trust: in the sandbox the
// user's config.toml is pinned read-only and the workspace is /workspace,
// which no trust of theirs names, so a project config the agent planted
// never reaches the model; unsandboxed neither, while the user's trust
// names no directory holding the workspace. The check that the probe can see it at all, and
// what stays open: unsandboxed, with the user trusting the workspace's
// path, it does (a -c override of the project's trust_level does not
// change that: 0.171 reads trust from the config files only).
func TestRealCodexLoadsNoProjectConfigAnAgentWroteInItsWorkspace(t *testing.T) {
	const planted = "PLANTED-PROJECT-INSTRUCTIONS-7c1f"
	run := func(t *testing.T, sb cliagent.Sandbox, trustWorkspace bool) bool {
		h := newReal(t, sb)
		if err := os.MkdirAll(filepath.Join(h.ws, ".codex"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.ws, ".codex", "config.toml"), []byte(`developer_instructions = "`+planted+`"`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if trustWorkspace {
			cfg := filepath.Join(h.home, ".codex", "config.toml")
			b, _ := os.ReadFile(cfg)
			b = append(b, "\n[projects."+tomlString(h.ws)+"]\ntrust_level = \"trusted\"\n"...)
			if err := os.WriteFile(cfg, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		h.script.Add(model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "done"})
		act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
		if err != nil {
			t.Fatal(err)
		}
		if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
			t.Fatalf("action = %+v", act)
		}
		for _, c := range h.script.Calls() {
			if strings.Contains(string(c.Body), planted) {
				return true
			}
		}
		return false
	}
	t.Run("sandboxed", func(t *testing.T) {
		if run(t, clitest.Sandboxed(t), false) {
			t.Error("the workspace's .codex/config.toml reached the model")
		}
	})
	t.Run("unsandboxed", func(t *testing.T) {
		if run(t, nil, false) {
			t.Error("the workspace's .codex/config.toml reached the model")
		}
	})
	t.Run("trusted by the user, unsandboxed", func(t *testing.T) {
		if !run(t, nil, true) {
			t.Error("a project config the user trusts never reached the model: the probe sees nothing")
		}
	})
}
