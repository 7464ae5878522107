package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// TestToolsShowNoPeersAgentID: a peer's snapshot lives at
// agents/<agent id>/NNN/workspace, and its agent id is often its model's
// name, which nothing an agent reads may carry. Neither run_command (its
// mount table, /peers/agentN resolved, a listing) nor the file tools (a
// listing, a read, a search, an error) may show it, while the peer's file
// is read at /peers/agentN all the same.
func TestToolsShowNoPeersAgentID(t *testing.T) {
	sandboxtest.Need(t)
	const peerID = "claude_opus_peer"
	base := t.TempDir()
	ws := filepath.Join(base, "agents", "me", "workspace")
	snap := filepath.Join(base, "agents", peerID, "003", "workspace")
	for _, d := range []string{ws, filepath.Join(snap, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(snap, "src", "index.html"), []byte("<h1>peer page</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, ".env"), []byte("KEY=sk-test-dummy-not-a-key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := New(Config{Workspace: ws, Peers: PeersOf([]providers.ShownAnswer{{Alias: "agent1", FilesDir: snap}})})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ws: ws, tb: tb}

	res := f.call(t, "run_command", map[string]any{"command": "cat /peers/agent1/src/index.html; cat /proc/self/mountinfo; " +
		"cd /peers/agent1/src && pwd -P && readlink -f index.html && ls -la /peers/agent1 /peers/agent1/src; " +
		"findmnt -n -o SOURCE,FSROOT,TARGET /peers/agent1 2>/dev/null; stat -c '%n' /peers/agent1/src/index.html"})
	wantOK(t, res, "<h1>peer page</h1>", "/peers/agent1")
	if strings.Contains(res.Content, peerID) {
		t.Errorf("run_command's output names the peer's agent id %q:\n%s", peerID, res.Content)
	}

	// The tree shown is the snapshot's files, read-only, to this step's
	// second command as to its first (which built it): no write, no chmod
	// reaches them, a .env stays hidden, and nothing is left beside the
	// workspace once the step's toolbox is closed.
	res = f.call(t, "run_command", map[string]any{"command": "cat /peers/agent1/.env; echo x >> /peers/agent1/src/index.html; chmod 777 /peers/agent1/src/index.html; rm -f /peers/agent1/src/index.html; cat /peers/agent1/src/index.html"})
	if strings.Contains(res.Content, "sk-test-dummy") || strings.Contains(res.Content, peerID) {
		t.Errorf("run_command shows the peer's .env or its agent id:\n%s", res.Content)
	}
	if b, err := os.ReadFile(filepath.Join(snap, "src", "index.html")); err != nil || string(b) != "<h1>peer page</h1>\n" {
		t.Errorf("the peer's snapshot changed under a command: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(snap, "src", "index.html")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the peer's snapshot file's mode changed under a command: %v, %v", fi.Mode(), err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(base, "agents", "me", ".peers-*")); len(left) > 0 {
		t.Errorf("the peers' trees are left after the step's toolbox closed: %v", left)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_files", map[string]any{}},
		{"list_files", map[string]any{"path": "/peers/agent1"}},
		{"read_file", map[string]any{"path": "peers/agent1/src/index.html"}},
		{"read_file", map[string]any{"path": "/peers/agent1/missing.txt"}},
		{"read_file", map[string]any{"path": "peers/agent1/src"}},
		{"search", map[string]any{"pattern": "peer"}},
		{"search", map[string]any{"pattern": "x", "path": "peers/agent1/nothing"}},
	} {
		res := f.call(t, c.tool, c.args)
		if strings.Contains(res.Content, peerID) {
			t.Errorf("%s %v names the peer's agent id %q:\n%s", c.tool, c.args, peerID, res.Content)
		}
	}
}

// TestACommandFailsOnPeersFilesItCannotShow: a peer's tree that misses
// files (a directory that could not be listed, a full disk) would show a
// command the peer's answer with files missing, as if the peer had not
// made them. The command does not run on it; what it says names the peer
// by its alias and the entry inside its tree, never by its agent id.
func TestACommandFailsOnPeersFilesItCannotShow(t *testing.T) {
	const peerID = "claude_opus_peer"
	base := t.TempDir()
	ws := filepath.Join(base, "agents", "me", "workspace")
	snap := filepath.Join(base, "agents", peerID, "003", "workspace")
	for _, d := range []string{ws, filepath.Join(snap, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(snap, "src", "index.html"), []byte("<h1>peer page</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(snap, "src"), 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(snap, "src"), 0o755) })
	tb, err := New(Config{Workspace: ws, Peers: PeersOf([]providers.ShownAnswer{{Alias: "agent1", FilesDir: snap}})})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var release func()
	unprivileged.Do(t, func() { _, release, err = tb.peerTrees() })
	if release != nil {
		release()
	}
	if err == nil {
		t.Fatal("peers/agent1/ was shown to a command without src/, and nothing said so")
	}
	if msg := err.Error(); !strings.Contains(msg, "peers/agent1/") || !strings.Contains(msg, "src") || strings.Contains(msg, peerID) {
		t.Errorf("the error should name peers/agent1/ and src, never the peer's agent id: %v", err)
	}
}

// TestACommandIsToldOfPeersEntriesThatAreNoFiles: a FIFO, a socket or a
// device in a peer's snapshot (none is ever snapshotted: put there by
// hand) is left out of its tree, whose reader would wait on a FIFO for
// good; the first command with the trees says so, naming it by the path
// the command sees, never by the peer's agent id, and the others do not
// repeat it.
func TestACommandIsToldOfPeersEntriesThatAreNoFiles(t *testing.T) {
	const peerID = "claude_opus_peer"
	base := t.TempDir()
	ws := filepath.Join(base, "agents", "me", "workspace")
	snap := filepath.Join(base, "agents", peerID, "003", "workspace")
	for _, d := range []string{ws, snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(snap, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb, err := New(Config{Workspace: ws, Peers: PeersOf([]providers.ShownAnswer{{Alias: "agent1", FilesDir: snap}})})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	_, release, err := tb.peerTrees()
	if err != nil {
		t.Fatalf("a FIFO in a peer's snapshot failed its tree: %v", err)
	}
	release()
	note := tb.trees.takeNotShown()
	if !strings.Contains(note, "/peers/agent1/pipe") || strings.Contains(note, peerID) {
		t.Errorf("the first command is told %q, want /peers/agent1/pipe named and no agent id", note)
	}
	if again := tb.trees.takeNotShown(); again != "" {
		t.Errorf("a later command is told again: %q", again)
	}
}
