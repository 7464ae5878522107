package sandbox_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// TestProbeAnswersForThePATHItIsAskedUnder: a test that hides the user's
// tools (PATH an empty directory) hears bwrap is missing, and the tests
// after it, under the real PATH, still get the sandbox. Cached once per
// process, the first answer stuck: run after such a test, the real-CLI MCP
// test failed in CI with "bwrap is not on PATH" on a machine that has it.
func TestProbeAnswersForThePATHItIsAskedUnder(t *testing.T) {
	sandboxtest.Need(t)
	t.Run("hidden", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		if ok, why := sandbox.Probe(); ok || !strings.Contains(why, "not on PATH") {
			t.Fatalf("with bwrap off PATH: %v, %s", ok, why)
		}
	})
	if ok, why := sandbox.Probe(); !ok {
		t.Fatalf("under the real PATH again: %s", why)
	}
}
