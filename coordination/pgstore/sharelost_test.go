package pgstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestASnapshotSharingABlobTheDatabaseLostStoresItAgain: an agent's
// unchanged file is shared with its previous snapshot, whose blob is gone
// from the database meanwhile (collected, as a deleted session's are). The
// new snapshot stores the content again, so another replica materialises
// it. Before, Share copied the previous snapshot's SHA-256 into the new
// manifest unchecked, and every other replica failed to read it.
func TestASnapshotSharingABlobTheDatabaseLostStoresItAgain(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaWithFiles(t, dsn), replicaWithFiles(t, dsn)
	ctx := context.Background()
	const id, agent = "lost", "agent_a"
	if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	ta := teamOn(a, id)
	live, err := ta.Prepare(agent)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"kept.txt": "unchanged from step to step", "lost.txt": "its blob goes"} {
		if err := os.WriteFile(filepath.Join(live, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond) // out of the racily-clean window: the next snapshot shares
	first := answer(t, a, ta, id, agent)
	m, _, err := ta.Snapshot(agent, first)
	if err != nil {
		t.Fatal(err)
	}
	lost, _ := m.Lookup("lost.txt")
	// kept.txt's blob was last touched long ago: sharing it touches it.
	if _, err := a.db.pool.Exec(ctx, `UPDATE blobs SET touched_at = now() - interval '3 hours'`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM blob_chunks WHERE tenant = $1 AND blob = $2`, `DELETE FROM blobs WHERE tenant = $1 AND sha256 = $2`} {
		if _, err := a.db.pool.Exec(ctx, q, a.tenant, lost.SHA256); err != nil {
			t.Fatal(err)
		}
	}

	second := answer(t, a, teamOn(a, id), id, agent)
	mb, ok, err := teamOn(b, id).Snapshot(agent, second)
	if err != nil || !ok || len(mb.Files) != 2 {
		t.Fatalf("replica B's snapshot of step %d: %+v, %v, %v; want both files", second, mb, ok, err)
	}
	got, err := os.ReadFile(filepath.Join(teamOn(b, id).SnapshotDir(agent, second), "lost.txt"))
	if err != nil || string(got) != "its blob goes" {
		t.Errorf("replica B reads lost.txt as %q (%v)", got, err)
	}
	var have bool
	if err := a.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blobs WHERE tenant = $1 AND sha256 = $2)`, a.tenant, lost.SHA256).Scan(&have); err != nil || !have {
		t.Errorf("lost.txt's blob is stored again: %v (%v)", have, err)
	}
	// The file whose blob is there is still shared, and its blob touched.
	if !sameFile(t, filepath.Join(ta.SnapshotDir(agent, first), "kept.txt"), filepath.Join(ta.SnapshotDir(agent, second), "kept.txt")) {
		t.Error("kept.txt, unchanged and its blob stored, was copied rather than shared with the previous snapshot")
	}
	kept, _ := m.Lookup("kept.txt")
	var recent bool
	if err := a.db.pool.QueryRow(ctx, `SELECT touched_at > now() - interval '1 minute' FROM blobs WHERE tenant = $1 AND sha256 = $2`, a.tenant, kept.SHA256).Scan(&recent); err != nil || !recent {
		t.Errorf("kept.txt's blob, shared, was not touched: %v (%v)", recent, err)
	}
}

// sameFile tells whether a and b are one file (a hard link shares it).
func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, errA := os.Lstat(a)
	fb, errB := os.Lstat(b)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	return os.SameFile(fa, fb)
}
