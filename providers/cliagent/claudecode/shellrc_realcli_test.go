package claudecode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// Claude Code 2.1.197 snapshots its shell before the first Bash command of
// a run: it runs `bash -c -l` sourcing ~/.bashrc (~/.zshrc for zsh, else
// ~/.profile), a login shell reading ~/.bash_profile or ~/.profile first,
// and sources the snapshot before each command. A sandboxed agent's HOME
// was its own from run to run: a startup file it wrote in one run ran,
// unjudged by the step's engine, in its next, as a session-env script did.
// Each run's HOME is fresh now; planted where the agent's directory keeps
// its state (the older HOME), they do not run either.
func TestRealClaudeRunsNoShellStartupFileAnAgentLeftInItsHOME(t *testing.T) {
	h := newRealIn(t, clitest.Sandboxed(t))
	h.bashStep(t, 1, "first")
	home := filepath.Dir(clitest.PrivateConfigDir(t, h.dir, ".claude"))

	// What the agent could have left there: its HOME is its own to write.
	for _, name := range []string{".bashrc", ".bash_profile", ".profile", ".zshrc"} {
		os.WriteFile(filepath.Join(home, name), []byte(`touch "$CLAUDE_CONFIG_DIR/projects/planted-`+name[1:]+`-ran"`+"\n"), 0o600)
	}
	h.bashStep(t, 2, "second")
	noneRan(t, h.dir, "a shell startup file the agent left in its HOME")
}

// noneRan fails the test for each planted-*-ran marker under dir, naming
// what planted it. The markers are written to the agent's kept projects
// ($CLAUDE_CONFIG_DIR/projects, under dir): a run's HOME and TMPDIR go
// with it.
func noneRan(t *testing.T, dir, what string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "planted-") && strings.HasSuffix(d.Name(), "-ran") {
			t.Errorf("%s ran in its next run (%s)", what, path)
		}
		return nil
	})
}
