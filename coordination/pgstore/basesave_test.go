package pgstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestABaseTheDatabaseRefusedIsTakenWhenTheCreationIsAskedAgain: the
// database refuses a session's starting files once, after the session's row
// was written. The creation fails and keeps no base of its own (before, the
// replica kept the base it could not record, so it and the other replicas
// started agents from different files); asking again with the same session
// id takes and records it (before, the join skipped it: every replica
// started the agents from nothing).
func TestABaseTheDatabaseRefusedIsTakenWhenTheCreationIsAskedAgain(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaWithFiles(t, dsn), replicaWithFiles(t, dsn)
	ctx := context.Background()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open})
	seed := int64(1)
	spec := coordination.TeamSpec{SessionID: "refused-base", Task: "Fix it", Models: []string{"sim", "sim"}, Seed: &seed,
		Contexts: []workspace.Context{{Path: src, Permission: workspace.Write}}}
	if _, err := a.db.pool.Exec(ctx, `ALTER TABLE snapshots ADD CONSTRAINT refuse_bases CHECK (step > 0) NOT VALID`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, spec); err == nil {
		t.Fatal("the creation succeeded though the database refused its starting files")
	}
	if m, _, err := teamOn(a, spec.SessionID).Base(); err != nil || len(m.Files) != 0 {
		t.Fatalf("replica A kept a base the database refused: %+v (%v)", m, err)
	}
	if _, err := a.db.pool.Exec(ctx, `ALTER TABLE snapshots DROP CONSTRAINT refuse_bases`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, spec); err != nil {
		t.Fatalf("asked again: %v", err)
	}
	for name, st := range map[string]*Store{"A": a, "B": b} {
		m, _, err := teamOn(st, spec.SessionID).Base()
		if err != nil || len(m.Files) != 1 || m.Files[0].Path != "main.go" {
			t.Errorf("replica %s's base = %+v (%v), want main.go", name, m, err)
		}
	}
}
