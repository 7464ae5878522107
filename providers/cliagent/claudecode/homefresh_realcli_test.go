package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// What a sandboxed agent's Bash commands leave in its HOME (an .npmrc
// naming a registry of its choosing, a program in ~/.local/bin, a global
// git config whose core.fsmonitor runs at the next git status) would
// change what an approved command of its next run does, unjudged. The
// agent's HOME is made afresh for each run: its `git config --global`
// holds within the run, and none of it reaches the next, which still
// resumes the first run's session.
func TestRealClaudesNextRunHasNoneOfWhatItsCommandsLeftInItsHOME(t *testing.T) {
	h := newGitWorkspace(t)
	// A script of its workspace, as an agent's command may run one: Claude
	// Code asks before a command line that writes outside the workspace.
	h.writeStep(t, "plant.sh", `git config --global user.name planted-by-run-one && git config --global user.name > first.txt
git config --global core.fsmonitor "touch \$CLAUDE_CONFIG_DIR/projects/planted-fsmonitor-ran; false"
echo registry=http://planted.invalid/ > ~/.npmrc
mkdir -p ~/.local/bin && printf 'touch "$CLAUDE_CONFIG_DIR/projects/planted-local-bin-ran"\n' > ~/.local/bin/planted && chmod +x ~/.local/bin/planted
`)
	h.commandStep(t, 1, "sh plant.sh")
	if b, _ := os.ReadFile(filepath.Join(h.ws, "first.txt")); strings.TrimSpace(string(b)) != "planted-by-run-one" {
		t.Errorf("the first run's git config --global did not hold within the run: first.txt = %q", b)
	}
	asked := len(h.script.Calls())
	h.commandStep(t, 2, `{ ls -A ~ ~/.local/bin; echo "git user: $(git config --global user.name)"; git status --short; } > second.txt 2>&1`)
	seen, _ := os.ReadFile(filepath.Join(h.ws, "second.txt"))
	t.Logf("the second run's HOME:\n%s", seen)
	for _, left := range []string{".npmrc", ".gitconfig", "planted"} {
		if strings.Contains(string(seen), left) {
			t.Errorf("the second run's HOME holds the %s the first run's command left:\n%s", left, seen)
		}
	}
	if !strings.Contains(string(seen), "git user: \n") {
		t.Errorf("the second run's git has the first run's global user.name:\n%s", seen)
	}
	noneRan(t, h.dir, "a global git config the agent set in its last run")
	if calls := h.script.Calls(); len(calls) <= asked || !strings.Contains(string(calls[asked].Body), "planted-by-run-one") {
		t.Errorf("the second run did not resume the first run's session (its first request does not carry the first run's command)")
	}
}

// writeStep has the harness's agent write a file of its workspace with its
// Edit tool, and answer.
func (h *realHarness) writeStep(t *testing.T, name, content string) {
	t.Helper()
	input, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, name), "old_string": "", "new_string": content})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Edit", Input: input},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"written"}`)},
	)
	h.answer(t, 1)
}

// commandStep runs step n of the harness's agent: one Bash command in its
// workspace, then its answer; the test fails unless the step answered.
func (h *realHarness) commandStep(t *testing.T, n int, command string) {
	t.Helper()
	cmd, _ := json.Marshal(map[string]string{"command": "cd " + h.inside + " && " + command, "description": "step"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: cmd},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"done"}`)},
	)
	h.answer(t, n)
}

// answer runs step n of the harness's agent as scripted; the test fails
// unless the step answered.
func (h *realHarness) answer(t *testing.T, n int) {
	t.Helper()
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
