package claudecode

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Claude Code 2.1.197 snapshots its shell before the first Bash command of
// a run: it runs `bash -c -l` sourcing ~/.bashrc (~/.zshrc for zsh, else
// ~/.profile), a login shell reading ~/.bash_profile or ~/.profile first,
// and sources the snapshot before each command. A sandboxed agent's HOME
// is its own from run to run: a startup file it wrote in one run ran,
// unjudged by the step's engine, in its next, as a session-env script did.
func TestRealClaudeRunsNoShellStartupFileAnAgentLeftInItsHOME(t *testing.T) {
	sb := clitest.Sandboxed(t)
	h := newRealIn(t, sb)
	step := func(n int, text string) {
		t.Helper()
		cmd, _ := json.Marshal(map[string]string{"command": "echo " + text, "description": "echo"})
		h.script.Add("claude-opus-4-6",
			fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: cmd},
			fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"` + text + `"}`)},
		)
		req := h.request(clitest.AnswerTool)
		req.StepNumber = n
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		act, _, err := h.p.Step(ctx, req)
		h.calls(t)
		if err != nil {
			t.Fatal(err)
		}
		if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
			t.Fatalf("action = %+v", act)
		}
	}
	step(1, "first")
	var home string
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".claude" && filepath.Base(filepath.Dir(path)) == "home" {
			home = filepath.Dir(path)
		}
		return nil
	})
	if home == "" {
		t.Fatalf("no agent HOME under %s", h.dir)
	}

	// What the agent could have left there: its HOME is its own to write.
	for _, name := range []string{".bashrc", ".bash_profile", ".profile", ".zshrc"} {
		os.WriteFile(filepath.Join(home, name), []byte(`touch "$TMPDIR/planted-`+name[1:]+`-ran"`+"\n"), 0o600)
	}
	step(2, "second")
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Base(filepath.Dir(path)) != "home" && len(d.Name()) > 8 && d.Name()[:8] == "planted-" {
			t.Errorf("a shell startup file the agent left in its HOME ran in its next run (%s)", path)
		}
		return nil
	})
}
