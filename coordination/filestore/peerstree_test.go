package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// run_command shows the peers' files from a tree it rebuilds, for each
// command, in a fresh .peers-* directory beside the agent's workspace
// (providers/tools/command.go, peerTrees), and removes it when the command
// ends. A server killed while a command runs (a crash, an OOM kill, a
// deploy) leaves that tree behind, hard links to peers' snapshots (or
// copies, across file systems) that keep their space after the snapshots
// are discarded. The resume's tidy removes it, as it removes a crashed
// step's other leftovers.
func TestACrashedCommandsPeersTreeIsRemovedByTheNextResume(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	writeSession(t, st, "team_x")
	agentDir := filepath.Join(state, "sessions", "team_x", "agents", "agent_a")
	left := filepath.Join(agentDir, ".peers-2718281828") // os.MkdirTemp(…, ".peers-")
	if err := os.MkdirAll(filepath.Join(left, "agent2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "agent2", "main.py"), []byte("print(1)\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(left, past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Tidy(context.Background(), "team_x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("the crashed command's peers tree %s survived the resume's tidy: %v", left, err)
	}
}
