package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The server binary must not link the benchmarks' plotting stack (gonum,
// LaTeX, PDF fonts): that is what cmd/massgen-bench is for.
func TestServerBinaryLinksNoBenchmarkCode(t *testing.T) {
	t.Parallel() // a process-level test: it waits on the go command, beside the others (Makefile unit)
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

// TestServerBinaryLinksOnlyTheSDKServicesItCalls: the Claude adapter builds
// the Messages and Models services, not anthropic.NewClient's every
// service (beta, files, skills, organizations): that client linked about
// 14 MB of API surface the server never calls into the binary.
func TestServerBinaryLinksOnlyTheSDKServicesItCalls(t *testing.T) {
	t.Parallel() // a process-level test: it waits on the go command, beside the others (Makefile unit)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// Its own build: the shared test binary (MASSGEN_TEST_BIN, make build)
	// is stripped (-s -w), and nm needs the symbol table.
	bin := filepath.Join(t.TempDir(), "massgen-mcp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for _, unused := range []string{"BetaMessageService", "FileService", "SkillService", "CompletionService"} {
		if strings.Contains(string(out), "anthropic-sdk-go.(*"+unused+").") {
			t.Errorf("the binary links anthropic's %s; build the services the adapter calls, not the whole client", unused)
		}
	}
	if !strings.Contains(string(out), "anthropic-sdk-go.(*MessageService).") {
		t.Fatal("the binary has no anthropic Messages service: is the symbol table stripped?")
	}
}
