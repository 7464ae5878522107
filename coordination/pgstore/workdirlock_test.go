package pgstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAWorkDirectoryServesOneReplica: a second replica opened on a work
// directory another holds is refused, saying to give each its own, before
// it touches the database; the directory is free again once the first is
// closed. Two on one directory cleared and wrote each other's workspaces
// (a session made again under a deleted one's id, incarnation.go).
func TestAWorkDirectoryServesOneReplica(t *testing.T) {
	dsn := pgtest.Schema(t)
	work := filepath.Join(t.TempDir(), "state")
	ctx := context.Background()
	a, err := Open(ctx, dsn, Options{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	// An address nothing answers at: refused by the lock first, the second
	// replica never dials.
	_, err = Open(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", Options{WorkDir: work})
	if !errors.Is(err, ErrWorkDirInUse) || !strings.Contains(err.Error(), "--state-dir") || !strings.Contains(err.Error(), work) {
		t.Fatalf("a second replica on the same work directory = %v; want ErrWorkDirInUse naming the directory and --state-dir", err)
	}
	own, err := Open(ctx, dsn, Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatalf("a replica on its own directory: %v", err)
	}
	own.Close()
	a.Close()
	b, err := Open(ctx, dsn, Options{WorkDir: work})
	if err != nil {
		t.Fatalf("a replica on the directory once the first closed: %v", err)
	}
	b.Close()
	// A replica that fails to open lets the directory go too.
	if _, err := Open(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", Options{WorkDir: work}); err == nil || errors.Is(err, ErrWorkDirInUse) {
		t.Fatalf("a replica on an unreachable database = %v; want a connection error", err)
	}
	c, err := Open(ctx, dsn, Options{WorkDir: work})
	if err != nil {
		t.Fatalf("a replica after one that failed to open: %v", err)
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(work, workDirLockName)); err != nil {
		t.Errorf("the lock file: %v", err)
	}
}
