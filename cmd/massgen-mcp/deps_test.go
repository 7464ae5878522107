package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The server binary must not link the benchmarks' plotting stack (gonum,
// LaTeX, PDF fonts): that is what cmd/massgen-bench is for.
func TestServerBinaryLinksNoBenchmarkCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"gonum.org/", "codeberg.org/go-latex", "codeberg.org/go-pdf", "github.com/massgen-go/massgen-mcp/coordination/benchmark"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("massgen-mcp imports %s; benchmark code belongs in cmd/massgen-bench", dep)
			}
		}
	}
}
