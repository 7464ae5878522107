package wholefile_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestWholefileIsALeaf: the file store, coordination, permissions and the
// surfaces all write through this package, so it imports nothing else of
// the project, and outside the standard library only golang.org/x/sys/unix
// (for renameat2, which the syscall package lacks).
func TestWholefileIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") && dep != "github.com/massgen-go/massgen-mcp/internal/wholefile" && dep != "golang.org/x/sys/unix" {
			t.Errorf("wholefile imports %s; it must stay a leaf", dep)
		}
	}
}
