package finalvalue

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFinalValueIsALeaf pins that the package imports nothing of the
// project: the core and the sims both import it, so an import of either
// would be a cycle, and of anything else a protocol rule that drifts.
func TestFinalValueIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const self = "github.com/massgen-go/massgen-mcp/providers/finalvalue"
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/massgen-go/massgen-mcp") && dep != self {
			t.Errorf("finalvalue imports %s; it must import nothing of the project", dep)
		}
	}
}
