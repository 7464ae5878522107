package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/internal/unprivileged"
)

// TestASnapshotWalksADirectoryItsAgentMadeUnsearchable: `chmod -R 644 dir`
// (a common slip) leaves dir readable but not searchable: it can be listed,
// but nothing in it can be stat'ed or opened. The walk of a snapshot must
// open it up as it does a directory of mode 000, or every answer fails.
func TestASnapshotWalksADirectoryItsAgentMadeUnsearchable(t *testing.T) {
	dir := t.TempDir()
	reopenOnCleanup(t, dir)
	write(t, dir, "fixtures/a.txt", "a")
	if err := os.Chmod(filepath.Join(dir, "fixtures"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var nodes []node
	unprivileged.Do(t, func() {
		o := &opened{root: root}
		nodes, _, err = walk(root, nil, Limits{}, o)
		if cerr := o.close(); err == nil {
			err = cerr
		}
	})
	if err != nil {
		t.Fatalf("walking a workspace with a directory of mode 0644: %v", err)
	}
	if len(nodes) != 2 {
		t.Fatalf("walked %d nodes, want fixtures and fixtures/a.txt", len(nodes))
	}
}
