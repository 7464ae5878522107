package pgstore

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestASessionMadeAgainUnderADeletedOnesIDSeesNoneOfItsFiles: a team of
// sims builds a site on replica A under a client's session id; a prune
// (another process: its own service) deletes the session and collects its
// blobs; a new session is made under the same id on A, for a Python
// function. Its agents start from nothing, every answer's snapshot lists
// only the new session's files, and replica B serves each of them. Before,
// A's directory still held the deleted session's workspaces and
// snapshots: the new agents worked among the site's files, A served the
// deleted session's steps as the new answers' files, and B could not
// materialise them ("no blob with that SHA-256 is stored").
func TestASessionMadeAgainUnderADeletedOnesIDSeesNoneOfItsFiles(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaWithFiles(t, dsn), replicaWithFiles(t, dsn)
	ctx := context.Background()
	opts := coordination.Options{Open: backends.Open, Parallel: 1, Logger: zerolog.Nop()}
	svcA := coordination.NewService(a, opts)
	const id = "reuse"
	seed := int64(3)
	run := func(task string) *coordination.TeamResult {
		t.Helper()
		if _, err := svcA.Create(ctx, coordination.TeamSpec{SessionID: id, Task: task, Models: []string{"sim/strong", "sim/strong"}, Seed: &seed}); err != nil {
			t.Fatal(err)
		}
		res, err := svcA.Run(ctx, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != coordination.StatusFinished || res.FilesCount == 0 {
			t.Fatalf("%q ended %s with %d files; the test needs a winner with files", task, res.Status, res.FilesCount)
		}
		return res
	}
	run("Build a one-page landing site for a bakery.")

	// A day later a prune, from another process, deletes the session and
	// collects the blobs nothing names any more.
	pruner := coordination.NewService(a, coordination.Options{Logger: zerolog.Nop(), Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
	if _, err := a.db.pool.Exec(ctx, `UPDATE blobs SET touched_at = now() - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	rep, err := pruner.Prune(ctx, coordination.PruneRequest{OlderThan: 24 * time.Hour})
	if err != nil || len(rep.Deleted) != 1 || rep.Blobs == 0 {
		t.Fatalf("the prune deleted %+v and %d blobs (%v); want the session and its blobs", rep, rep.Blobs, err)
	}

	res := run("Write a Python function that reverses a string.")
	site := func(path string) bool { return path == "index.html" || path == "style.css" }
	for _, f := range res.Files {
		if site(f.Path) {
			t.Errorf("the new session's winner delivers the deleted session's %s", f.Path)
		}
	}
	s, err := a.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, ag := range s.Agents {
		ents, _ := os.ReadDir(teamOn(a, id).Live(ag.ID))
		for _, e := range ents {
			if site(e.Name()) {
				t.Errorf("%s's live workspace on A holds the deleted session's %s", ag.ID, e.Name())
			}
		}
	}
	l, err := a.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	svcB := coordination.NewService(b, opts)
	answers := 0
	for _, es := range l.Agents {
		for _, e := range es {
			if e.Kind != coordination.KindAnswer {
				continue
			}
			answers++
			for name, svc := range map[string]*coordination.Service{"A": svcA, "B": svcB} {
				list, err := svc.AnswerFiles(ctx, id, e.Label, "")
				if err != nil {
					t.Errorf("replica %s lists the files of %s: %v", name, e.Label, err)
					continue
				}
				if len(list.Files) == 0 {
					t.Errorf("replica %s lists no files for %s", name, e.Label)
				}
				for _, f := range list.Files {
					if site(f.Path) || !strings.HasSuffix(f.Path, ".py") {
						t.Errorf("replica %s lists %s among %s's files; the new session wrote only Python", name, f.Path, e.Label)
					}
					if _, err := svc.AnswerFiles(ctx, id, e.Label, f.Path); err != nil {
						t.Errorf("replica %s serves %s of %s: %v", name, f.Path, e.Label, err)
					}
				}
			}
		}
	}
	if answers == 0 {
		t.Fatal("the new session has no answers")
	}
}
