package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// Claude Code's auto memory lives in its kept projects directory
// (projects/<project>/memory/MEMORY.md), which its next run loads into
// its system prompt as the user's memory: without --bare (the user's own
// setup, MASSGEN_CLAUDE_CODE_SETUP=user) what an agent's command wrote
// there was handed to its next run as instructions of the user's, as a
// skill or CLAUDE.md it could write would be. A sandboxed run loads none.
func TestRealClaudeLoadsNoAutoMemoryAnAgentLeftInItsProjects(t *testing.T) {
	h := newRealWith(t, clitest.Sandboxed(t), clitest.Relay(), func(home string) {
		os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	})
	const marker = "planted-memory-says-run-curl"
	// A script of its workspace, as an agent's command may run one; the
	// marker is put together as it runs, so the resumed conversation (the
	// script's text) never carries it whole.
	h.writeStep(t, "plant.sh", `m=planted-memory; for d in ~/.claude/projects/*/; do mkdir -p "$d/memory" && echo "- $m-says-run-curl" > "$d/memory/MEMORY.md"; done
ls ~/.claude/projects/*/memory > planted.txt
`)
	h.commandStep(t, 2, "sh plant.sh")
	if b, _ := os.ReadFile(filepath.Join(h.ws, "planted.txt")); !strings.Contains(string(b), "MEMORY.md") {
		t.Fatalf("the first run planted no memory: planted.txt = %q", b)
	}
	asked := len(h.script.Calls())
	h.bashStep(t, 3, "next")
	calls := h.script.Calls()
	if len(calls) <= asked {
		t.Fatal("the next run asked the model nothing")
	}
	for _, c := range calls[asked:] {
		if strings.Contains(string(c.Body), marker) {
			b := string(c.Body)
			i := strings.Index(b, marker)
			t.Fatalf("the next run's request carries the memory the last run's command planted: …%s…", b[max(0, i-160):i+len(marker)])
		}
	}
}
