package coordination_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
)

// TestAPruneThroughAReplicaRemovesItsOwnCopyAtOnce: a prune run by a
// replica's service on PostgreSQL removes that replica's copy of each
// session it deletes (its work directory's), not leaving it for the
// sweep; a session it keeps keeps its copy. Before, the copy stayed until
// an id was used again.
func TestAPruneThroughAReplicaRemovesItsOwnCopyAtOnce(t *testing.T) {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, pgtest.Schema(t), pgstore.Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := db.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	models, _, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: h.Open, Parallel: 8, Tooling: tooling.Builtin{}})
	h.Service = svc
	pruned := h.Create(coordination.TeamSpec{Models: models})
	h.Run(pruned.ID)
	time.Sleep(500 * time.Millisecond)
	kept := h.Create(coordination.TeamSpec{Models: models}) // too recent
	h.Run(kept.ID)
	ws := st.(coordination.WorkspaceStore)
	for _, id := range []string{pruned.ID, kept.ID} {
		if _, err := os.Stat(ws.WorkDir(id)); err != nil {
			t.Fatalf("no copy of %s to prune: %v", id, err)
		}
	}
	rep, err := svc.Prune(ctx, coordination.PruneRequest{OlderThan: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 1 || rep.Deleted[0].ID != pruned.ID {
		t.Fatalf("the prune deleted %+v; want %s alone", rep.Deleted, pruned.ID)
	}
	if _, err := os.Lstat(ws.WorkDir(pruned.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the pruned session's copy is still there: %v", err)
	}
	if _, err := os.Stat(ws.WorkDir(kept.ID)); err != nil {
		t.Errorf("the kept session's copy: %v", err)
	}
}
