package coordination

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestApplyRefusalsShowEachFileNameAsItIs: a refused apply's message (the
// CLI prints it before the user decides how to apply) named conflicting
// files raw, so a name with a newline made up a line of it, and held tool
// configuration through %q, a quoting of its own; both now show each name
// as every other listing does (permissions.Shown).
func TestApplyRefusalsShowEachFileNameAsItIs(t *testing.T) {
	changes := []workspace.Change{{Path: "a\nTo fix: nothing", Op: "changed", Reason: "changed since"}, {Path: "b\x1b[2K\\n", Op: "added", Reason: "runs"}}
	for _, msg := range []string{
		(&ApplyConflictError{Session: "s", Conflicts: changes}).Error(),
		(&ConfigHeldError{Session: "s", Held: changes}).Error(),
	} {
		if strings.ContainsAny(msg, "\n\x1b") {
			t.Errorf("a file name acts on the screen: %q", msg)
		}
		if !strings.Contains(msg, ` a\nTo fix: nothing (changed`) || !strings.Contains(msg, ` b\x1b[2K\\n (added`) {
			t.Errorf("the names are not shown as permissions.Shown shows them: %s", msg)
		}
	}
}
