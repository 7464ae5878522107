package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// Claude Code 2.1.197 runs git status in its working directory as a run
// starts, for the status its system prompt holds, and git status runs the
// repository's core.fsmonitor (and its filter drivers). The workspace is
// the agent's to write, its .git too (or a .git of its own in place of a
// worktree's .git file): a core.fsmonitor it set there in one run ran,
// unjudged by the step's engine, as its next run started. A sandboxed run
// leaves the git status out of its prompt (the agent can ask git itself,
// through the engine).
func TestRealClaudeRunsNoGitConfigAnAgentLeftInItsWorkspace(t *testing.T) {
	h := newGitWorkspace(t)
	h.bashStep(t, 1, "first")

	// What the agent could have left there: its workspace is its own.
	f, err := os.OpenFile(filepath.Join(h.ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[core]\n\tfsmonitor = \"touch $CLAUDE_CONFIG_DIR/projects/planted-fsmonitor-ran; false\"\n")
	f.Close()
	h.bashStep(t, 2, "second")
	noneRan(t, h.dir, "a git config the agent left in its workspace")
}

// Claude Code 2.1.197 runs git in its working directory as a run starts
// (the status its system prompt holds), and git reads its global config
// from HOME (~/.gitconfig, ~/.config/git/config), which was the agent's own
// from run to run: a core.fsmonitor the agent set there in one run ran,
// unjudged, as its next run started. A sandboxed run's HOME is fresh, its
// git's global config its own run's
// (TestRealClaudesNextRunHasNoneOfWhatItsCommandsLeftInItsHOME); planted
// where the agent's directory keeps its state (the older HOME), it does
// not run either.
func TestRealClaudeRunsNoGitConfigAnAgentLeftInItsHOME(t *testing.T) {
	h := newGitWorkspace(t)
	h.bashStep(t, 1, "first")
	home := filepath.Dir(clitest.PrivateConfigDir(t, h.dir, ".claude"))

	fsmonitor := func(name string) []byte {
		return []byte("[core]\n\tfsmonitor = \"touch $CLAUDE_CONFIG_DIR/projects/planted-" + name + "-ran; false\"\n")
	}
	os.WriteFile(filepath.Join(home, ".gitconfig"), fsmonitor("gitconfig"), 0o600)
	os.MkdirAll(filepath.Join(home, ".config", "git"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "git", "config"), fsmonitor("xdg-config"), 0o600)
	h.bashStep(t, 2, "second")
	noneRan(t, h.dir, "a git config the agent left in its HOME")
}

// newGitWorkspace is a sandboxed real harness whose workspace is a git
// repository with a file in it, so git status has an index to refresh.
func newGitWorkspace(t *testing.T) *realHarness {
	t.Helper()
	h := newRealIn(t, clitest.Sandboxed(t))
	if out, err := exec.Command("git", "init", "-q", h.ws).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(h.ws, "a.txt"), []byte("x\n"), 0o644)
	return h
}
