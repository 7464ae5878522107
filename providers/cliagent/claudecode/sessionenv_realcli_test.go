package claudecode

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Claude Code 2.1.197 keeps a session's environment scripts in
// CLAUDE_CONFIG_DIR/session-env/<session id>/ (what its SessionStart,
// Setup, CwdChanged and FileChanged hooks wrote to CLAUDE_ENV_FILE), and
// sources every <event>-hook-<n>.sh there before each Bash command of that
// session; a resumed session keeps its id, and later steps resume it. A
// script the agent left there in one run would run, unjudged by the
// step's engine, before every command of its next: the directory is
// cleared before each run.
func TestRealClaudeSourcesNoSessionEnvScriptAnAgentLeftForItsNextRun(t *testing.T) {
	sb := clitest.Sandboxed(t)
	h := newRealIn(t, sb)
	echo, _ := json.Marshal(map[string]string{"command": "echo first", "description": "echo"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: echo},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"first"}`)},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	act, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool))
	h.calls(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	var private, session string
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".claude" && filepath.Base(filepath.Dir(path)) == "home" {
			private = path
		}
		if id, ok := strings.CutSuffix(d.Name(), ".jsonl"); ok && filepath.Base(filepath.Dir(filepath.Dir(path))) == "projects" {
			session = id
		}
		return nil
	})
	if private == "" || session == "" {
		t.Fatalf("no private config directory (%q) or session transcript (%q) under %s", private, session, h.dir)
	}

	// What the agent could have left there: its config directory is its
	// own to write (its sessions live there).
	env := filepath.Join(private, "session-env", session)
	if err := os.MkdirAll(env, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(env, "sessionstart-hook-0.sh"), []byte(`touch "$TMPDIR/planted-env-ran"`+"\n"), 0o600)
	again, _ := json.Marshal(map[string]string{"command": "echo second", "description": "echo"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: again},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"second"}`)},
	)
	req := h.request(clitest.AnswerTool)
	req.StepNumber = 2
	ctx2, cancel2 := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel2()
	act, _, err = h.p.Step(ctx2, req)
	h.calls(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "planted-env-ran" {
			t.Errorf("the session-env script the agent left ran before its next run's Bash command (%s)", path)
		}
		return nil
	})
}
