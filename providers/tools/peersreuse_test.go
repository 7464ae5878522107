package tools

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// TestAStepsCommandsShareOnePeersTree: each sandboxed command saw its
// peers' files through a tree rebuilt for it (about 0.1 s at 2,000 files,
// 1.3 s at 20,000, on every command). A step's peers are the same
// snapshots for all of its commands and snapshots never change, so the
// tree its first command builds serves the rest, read-only as ever, and
// goes when the step's toolbox is closed.
func TestAStepsCommandsShareOnePeersTree(t *testing.T) {
	sandboxtest.Need(t)
	base := t.TempDir()
	ws := filepath.Join(base, "agents", "me", "workspace")
	snap := filepath.Join(base, "agents", "opus_the_peer", "003", "workspace")
	for _, d := range []string{ws, snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(snap, "index.html"), []byte("<h1>peer page</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := New(Config{Workspace: ws, Peers: PeersOf([]providers.ShownAnswer{{Alias: "agent1", FilesDir: snap}})})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ws: ws, tb: tb}
	trees := func() []string {
		left, _ := filepath.Glob(filepath.Join(base, "agents", "me", ".peers-*"))
		return left
	}

	wantOK(t, f.call(t, "run_command", map[string]any{"command": "cat /peers/agent1/index.html"}), "<h1>peer page</h1>")
	first := trees()
	if len(first) != 1 {
		t.Fatalf("after the step's first command, want its one peers' tree kept for the next, found %v", first)
	}
	before, err := os.Stat(filepath.Join(first[0], "agent1"))
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, f.call(t, "run_command", map[string]any{"command": "cat /peers/agent1/index.html"}), "<h1>peer page</h1>")
	after, err := os.Stat(filepath.Join(first[0], "agent1"))
	if err != nil || !os.SameFile(before, after) || len(trees()) != 1 {
		t.Fatalf("the step's second command did not reuse the first's tree: %v, %v", trees(), err)
	}

	c, ok := any(tb).(io.Closer)
	if !ok {
		t.Fatal("a step's toolbox has no Close to remove its peers' tree")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if left := trees(); len(left) > 0 {
		t.Errorf("the peers' tree is left after the step's toolbox closed: %v", left)
	}
	res := f.call(t, "run_command", map[string]any{"command": "cat /peers/agent1/index.html"})
	if !res.IsError {
		t.Errorf("a command ran after its step's toolbox closed: %s", res.Content)
	}
	if left := trees(); len(left) > 0 {
		t.Errorf("a command after the close left a peers' tree: %v", left)
	}
}
