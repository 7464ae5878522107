package pgstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAnOldOpenWorkDirectoryIsClosedAtOpen: a replica's work directory
// (serve's state directory) an earlier version made 0755 holds the live
// workspaces of its sessions, copies of the user's project; opening the
// store closes it and its sessions and tenants directories to group and
// others, as the file store closes its state directory.
func TestAnOldOpenWorkDirectoryIsClosedAtOpen(t *testing.T) {
	dsn := pgtest.Schema(t)
	work := filepath.Join(t.TempDir(), ".massgen")
	dirs := []string{work, filepath.Join(work, "sessions"), filepath.Join(work, "tenants")}
	if err := os.MkdirAll(filepath.Join(dirs[1], "old", "agents", "agent_a", "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dirs[2], 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(context.Background(), dsn, Options{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %#o after a replica opened it as its work directory, want 0700", d, fi.Mode().Perm())
		}
	}
}
