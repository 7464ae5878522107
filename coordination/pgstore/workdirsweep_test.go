//go:build unix

package pgstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// sweeper is a replica with a work directory of its own whose sweeps run
// only when the test asks (Options.noSweep).
func sweeper(t *testing.T, dsn string, opts Options) *Store {
	t.Helper()
	opts.WorkDir, opts.noSweep = t.TempDir(), true
	return replicaOn(t, dsn, opts)
}

// holdCopy is what a step does on st's replica as it opens session id of
// the incarnation the database holds now: it claims the replica's
// directory of it and works in an agent's live workspace. It returns the
// file it wrote.
func holdCopy(t *testing.T, st *Store, id string) string {
	t.Helper()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return claimAs(t, st.WorkDir(id), s.CreatedAt)
}

// claimAs claims dir for the session made at created (coordination's
// incarnation) and writes a file in an agent's live workspace.
func claimAs(t *testing.T, dir string, created time.Time) string {
	t.Helper()
	team := workspace.NewTeam(dir, nil, "")
	team.Incarnation = created.UTC().Format(time.RFC3339Nano)
	live, err := team.Prepare("agent_a")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(live, "work.txt")
	if err := os.WriteFile(p, []byte("work"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gone(p string) bool {
	_, err := os.Lstat(p)
	return errors.Is(err, fs.ErrNotExist)
}

// remake deletes session id through st and makes it again, an hour later.
func remake(t *testing.T, st *Store, id string) {
	t.Helper()
	ctx := context.Background()
	if err := st.DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	s := storetest.NewSession(id)
	s.CreatedAt = s.CreatedAt.Add(time.Hour)
	if err := st.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// TestEveryReplicaSweepsTheDirectoriesOfDeletedSessions: two replicas
// each hold a copy of session pruned; it is deleted through one, and each
// one's sweep removes its own copy. A live session's copies stay; so does
// the copy of a session deleted and made again that a step already
// claimed, while a copy of its deleted incarnation goes; another tenant's
// session of the deleted id stays, and a directory that does not say whose
// it is (a file store's session on a shared state directory) stays. Before,
// every replica kept a deleted session's directory for ever.
func TestEveryReplicaSweepsTheDirectoriesOfDeletedSessions(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	a, b := sweeper(t, dsn, Options{}), sweeper(t, dsn, Options{})
	for _, id := range []string{"pruned", "live", "again"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	prunedA, prunedB := holdCopy(t, a, "pruned"), holdCopy(t, b, "pruned")
	liveA, liveB := holdCopy(t, a, "live"), holdCopy(t, b, "live")
	oldAgainA := holdCopy(t, a, "again") // of the incarnation deleted below
	holdCopy(t, b, "again")
	acmeDB, err := a.db.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	acme := acmeDB.(*Store)
	if err := acme.Create(ctx, storetest.NewSession("pruned")); err != nil {
		t.Fatal(err)
	}
	acmePruned := holdCopy(t, acme, "pruned")
	unmarked := filepath.Join(a.WorkDir("filestore_one"), "session.json")
	if err := os.MkdirAll(filepath.Dir(unmarked), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unmarked, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := a.DeleteSession(ctx, "pruned"); err != nil {
		t.Fatal(err)
	}
	remake(t, a, "again")
	newAgainB := filepath.Join(b.WorkDir("again"), "agents", "agent_a", "workspace", "new.txt")
	claimAs(t, b.WorkDir("again"), storetest.NewSession("again").CreatedAt.Add(time.Hour))
	if err := os.WriteFile(newAgainB, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}

	swA, err := a.db.SweepWorkDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	swB, err := b.db.SweepWorkDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{prunedA, prunedB} {
		if !gone(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(p))))) {
			t.Errorf("the deleted session's directory holding %s is still there", p)
		}
	}
	if !gone(oldAgainA) {
		t.Error("replica A's copy of the deleted incarnation of again is still there")
	}
	for _, p := range []string{liveA, liveB, newAgainB, acmePruned, unmarked} {
		if gone(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if swA.Removed != 2 || swB.Removed != 1 || swA.Bytes < 4 || swA.Failed+swB.Failed != 0 {
		t.Errorf("the sweeps report %+v and %+v; want 2 removed on A, 1 on B", swA, swB)
	}
	for _, st := range []*Store{a, b} {
		ents, _ := os.ReadDir(st.SessionsDir())
		for _, e := range ents {
			if _, ok := asideOf(e.Name()); ok {
				t.Errorf("%s is left beside the sessions", e.Name())
			}
		}
	}
}

// TestASweepRacingAStepsClaimLeavesTheStepsDirectoryWhole: a sweep has
// decided the replica's directory of session again is its deleted
// incarnation's and, before it removes it, a step of the session made
// again claims it and starts working there: the sweep removes nothing, and
// the step's workspace is whole.
func TestASweepRacingAStepsClaimLeavesTheStepsDirectoryWhole(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	var step string
	var a *Store
	a = sweeper(t, dsn, Options{sweepDecided: func(dir string) {
		if dir == a.WorkDir("again") {
			step = holdCopy(t, a, "again")
		}
	}})
	if err := a.Create(ctx, storetest.NewSession("again")); err != nil {
		t.Fatal(err)
	}
	holdCopy(t, a, "again")
	remake(t, a, "again")

	sw, err := a.db.SweepWorkDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if step == "" {
		t.Fatal("the sweep did not take the directory for a deleted session's")
	}
	if got, err := os.ReadFile(step); err != nil || string(got) != "work" {
		t.Errorf("the step's work.txt reads %q (%v): the sweep cleared the directory it claimed", got, err)
	}
	if sw.Removed != 0 {
		t.Errorf("the sweep reports %+v; want nothing removed", sw)
	}
}

// TestAReplicaSweepsItsWorkDirectoryAsItStarts: a replica started on a
// work directory holding a copy of a session deleted while it was down
// removes it without being asked.
func TestAReplicaSweepsItsWorkDirectoryAsItStarts(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	work := t.TempDir()
	a := replicaOn(t, dsn, Options{WorkDir: work, noSweep: true})
	if err := a.Create(ctx, storetest.NewSession("pruned")); err != nil {
		t.Fatal(err)
	}
	holdCopy(t, a, "pruned")
	dir := a.WorkDir("pruned")
	a.db.Close()
	other := replicaOn(t, dsn, Options{})
	if err := other.DeleteSession(ctx, "pruned"); err != nil {
		t.Fatal(err)
	}
	replicaOn(t, dsn, Options{WorkDir: work})
	for deadline := time.Now().Add(10 * time.Second); !gone(dir); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the deleted session's directory is still there 10s after the replica started")
		}
	}
}
