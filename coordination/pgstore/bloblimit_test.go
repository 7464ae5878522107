package pgstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// A file over the shared store's blob limit is refused as the workspace
// being too large, in words a user can act on, before any of it is sent:
// before, it was written to the database up to the limit and then
// refused, at every answer, as a plain error (found by review).
func TestAFileOverTheBlobLimitIsRefusedBeforeItIsSent(t *testing.T) {
	a, ta, live := preparedOn(t, pgtest.Schema(t), "big", "agent_a")
	f, err := os.Create(filepath.Join(live, "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(DefaultBlobLimit + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, err = ta.Stage("agent_a", 1)
	if !errors.Is(err, workspace.ErrTooLarge) || !strings.Contains(err.Error(), "MiB") || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("staging a file over the blob limit = %v; want the workspace too large, in MiB, saying what to do", err)
	}
	var chunks int
	if err := a.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM blob_chunks`).Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("%d chunks stored (%v); want none", chunks, err)
	}
}
