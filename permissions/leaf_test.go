package permissions

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPermissionsIsALeaf: providers, the tools, coordination and the CLI
// adapters all import this package, so it imports nothing of the project
// but the leaves under internal/ (a file written whole), which import
// nothing of it either: anything else they pulled in would be listed here.
func TestPermissionsIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/massgen-go/massgen-mcp/internal/") {
			continue
		}
		if strings.HasPrefix(dep, "github.com/") && dep != "github.com/massgen-go/massgen-mcp/permissions" {
			t.Errorf("permissions imports %s; it must stay a leaf", dep)
		}
	}
}
