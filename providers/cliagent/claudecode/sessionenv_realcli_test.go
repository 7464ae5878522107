package claudecode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// Claude Code 2.1.197 keeps a session's environment scripts in
// CLAUDE_CONFIG_DIR/session-env/<session id>/ (what its SessionStart,
// Setup, CwdChanged and FileChanged hooks wrote to CLAUDE_ENV_FILE), and
// sources every <event>-hook-<n>.sh there before each Bash command of that
// session; a resumed session keeps its id, and later steps resume it. A
// script the agent left there in one run would run, unjudged by the
// step's engine, before every command of its next: the run's config
// directory is fresh each run, only projects kept from the agent's own
// (planted here in that, where an older build kept the whole directory).
func TestRealClaudeSourcesNoSessionEnvScriptAnAgentLeftForItsNextRun(t *testing.T) {
	h := newRealIn(t, clitest.Sandboxed(t))
	h.bashStep(t, 1, "first")
	private := clitest.PrivateConfigDir(t, h.dir, ".claude")
	var session string
	filepath.WalkDir(private, func(path string, d fs.DirEntry, err error) error {
		if id, ok := strings.CutSuffix(d.Name(), ".jsonl"); err == nil && ok && filepath.Base(filepath.Dir(filepath.Dir(path))) == "projects" {
			session = id
		}
		return nil
	})
	if session == "" {
		t.Fatalf("no session transcript under %s", private)
	}

	// What the agent could have left there: its config directory is its
	// own to write (its sessions live there).
	env := filepath.Join(private, "session-env", session)
	if err := os.MkdirAll(env, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(env, "sessionstart-hook-0.sh"), []byte(`touch "$CLAUDE_CONFIG_DIR/projects/planted-env-ran"`+"\n"), 0o600)
	h.bashStep(t, 2, "second")
	noneRan(t, h.dir, "the session-env script the agent left")
}
