package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestSessionsPruneDeletesOldEndedSessionsOnly: on a file store, a dry run
// lists the old sessions and deletes nothing; the prune deletes them,
// frees their space and leaves no trash, the recent session and the
// follow-up turn continuing a deleted one keep working, and the listing
// and fsck read the state directory as before (the conversation's link
// into the deleted turn is gone, not dangling).
func TestSessionsPruneDeletesOldEndedSessionsOnly(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		args = append([]string{"run", "--state-dir", dir, "--models", "sim/strong,sim/strong", "--seed", "1"}, args...)
		if out, code := cli(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	run("--session-id", "old1", "What is 2 * 3?")
	run("--session-id", "old2", "What is 4 * 5?")
	time.Sleep(3 * time.Second)
	run("--session-id", "new1", "--continue", "old1", "And times 7?")
	// The conversation's record of turn 1 links into old1's files, as
	// WriteTurn links a winner's snapshot.
	turn1 := filepath.Join(dir, "conversations", "old1", "turn_1")
	if err := os.Symlink("../../../sessions/old1/agents", filepath.Join(turn1, "workspace")); err != nil {
		t.Fatal(err)
	}

	out, code := cli(t, "sessions", "prune", "--state-dir", dir, "--older-than", "2s", "--dry-run")
	if code != 0 || !strings.Contains(out, "Would delete 2 sessions") || !strings.Contains(out, "old1") || !strings.Contains(out, "old2") ||
		strings.Contains(out, "new1") || !strings.Contains(out, "Nothing deleted (--dry-run)") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	for _, id := range []string{"old1", "old2", "new1"} {
		if _, err := os.Stat(filepath.Join(dir, "sessions", id, "session.json")); err != nil {
			t.Fatalf("the dry run deleted %s: %v", id, err)
		}
	}

	rep, ids, out := pruneJSON(t, "--state-dir", dir, "--older-than", "2s")
	if !slices.Equal(ids, []string{"old1", "old2"}) || rep.Bytes <= 0 || rep.DryRun {
		t.Fatalf("the prune deleted %v and freed %d bytes, want old1 and old2 and their space:\n%s", ids, rep.Bytes, out)
	}
	des, err := os.ReadDir(filepath.Join(dir, "sessions"))
	if err != nil || len(des) != 1 || des[0].Name() != "new1" {
		t.Fatalf("the sessions directory after the prune: %v (%v), want new1 alone, no trash", des, err)
	}
	if _, err := os.Lstat(filepath.Join(turn1, "workspace")); !os.IsNotExist(err) {
		t.Fatalf("the deleted turn's workspace link is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(turn1, "answer.txt")); err != nil {
		t.Fatalf("the conversation lost the deleted turn's answer: %v", err)
	}

	if out, code = cli(t, "sessions", "--state-dir", dir, "--json", "--all"); code != 0 || !strings.Contains(out, `"new1"`) || strings.Contains(out, `"session_id": "old1"`) {
		t.Fatalf("sessions after the prune: exit %d\n%s", code, out)
	}
	if out, code = cli(t, "fsck", "--state-dir", dir, "all"); code != 0 {
		t.Fatalf("fsck after the prune: exit %d\n%s", code, out)
	}
	if out, code = cli(t, "status", "--state-dir", dir, "new1"); code != 0 || !strings.Contains(out, "old1") {
		t.Fatalf("status of the follow-up whose previous turn was pruned: exit %d\n%s", code, out)
	}
	run("--session-id", "new2", "--continue", "new1", "And minus 1?")

	// Nothing is old enough now: a second prune deletes nothing.
	if out, code = cli(t, "sessions", "prune", "--state-dir", dir, "--older-than", "1h"); code != 0 || !strings.Contains(out, "No session to prune") {
		t.Fatalf("a prune with nothing to delete: exit %d\n%s", code, out)
	}
}

// pruneJSON runs sessions prune --json with args and returns its report,
// the ids it deleted in order, and its output.
func pruneJSON(t *testing.T, args ...string) (coordination.PruneReport, []string, string) {
	t.Helper()
	out, code := cli(t, append([]string{"sessions", "prune", "--json"}, args...)...)
	var rep coordination.PruneReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("prune: exit %d, %v\n%s", code, err, out)
	}
	var ids []string
	for _, p := range rep.Deleted {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return rep, ids, out
}

// TestSessionsPruneRefusesNoAgeAndBadStatuses: --older-than is required,
// and an age or a status it cannot take is refused naming the choices.
func TestSessionsPruneRefusesNoAgeAndBadStatuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--older-than is required"},
		{[]string{"--older-than", "soon"}, "such as 30d, 2w, 720h or 90m"},
		{[]string{"--older-than", "-1h"}, "not a positive age"},
		{[]string{"--older-than", "1h", "--status", "running"}, "finished, failed, cancelled, interrupted"},
	} {
		out, code := cli(t, append([]string{"sessions", "prune", "--state-dir", dir}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s", tc.args, code, exitBadInput, tc.want, out)
		}
	}
	if d, err := parseAge("30d"); err != nil || d != 30*24*time.Hour {
		t.Errorf("30d = %v, %v", d, err)
	}
}

// TestSessionsPruneDeletesATenantsOldSessionsFromPostgreSQL: with --store
// and --tenant, the prune deletes that tenant's old ended sessions from the
// database and nothing of another tenant's (the default's, as old), and the
// listing of both reads on as before.
func TestSessionsPruneDeletesATenantsOldSessionsFromPostgreSQL(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	ran := func(st *pgstore.Store) string {
		t.Helper()
		svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 * 3?", Models: []string{"sim/strong", "sim/strong"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Run(ctx, s.ID, nil); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	acme, def := pgTenant(t, dsn, "acme"), pgTenant(t, dsn, coordination.DefaultTenant)
	old1, old2, theirs := ran(acme), ran(acme), ran(def)
	time.Sleep(3 * time.Second)
	recent := ran(acme)

	_, ids, out := pruneJSON(t, "--store", dsn, "--tenant", "acme", "--older-than", "2s")
	want := []string{old1, old2}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("the prune deleted %v, want acme's two old sessions %v:\n%s", ids, want, out)
	}
	for _, id := range want {
		if _, err := acme.Session(ctx, id); !errors.Is(err, coordination.ErrSessionNotFound) {
			t.Errorf("session %s after the prune: %v, want not found", id, err)
		}
	}
	if out, code := cli(t, "sessions", "--store", dsn, "--tenant", "acme", "--json", "--all"); code != 0 || !strings.Contains(out, recent) || strings.Contains(out, old1) {
		t.Fatalf("acme's sessions after the prune: exit %d\n%s", code, out)
	}
	if out, code := cli(t, "sessions", "--store", dsn, "--json", "--all"); code != 0 || !strings.Contains(out, theirs) {
		t.Fatalf("the default tenant's sessions after acme's prune: exit %d\n%s", code, out)
	}
}

// TestSessionsPruneOnPostgreSQLReportsTheSpaceItsRowsHeld: a prune of a
// PostgreSQL store reports the stored size of the rows it deleted, each
// session's and in all, measured as they are deleted, and its dry run the
// same figures beforehand; never a false 0 B.
func TestSessionsPruneOnPostgreSQLReportsTheSpaceItsRowsHeld(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	for range 2 {
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 * 3?", Models: []string{"sim/strong", "sim/strong"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Run(ctx, s.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	dry, _, out := pruneJSON(t, "--store", dsn, "--older-than", "1s", "--dry-run")
	if len(dry.Deleted) != 2 || dry.Bytes < 1024 {
		t.Fatalf("a dry prune of two finished sessions would free %d bytes, want their rows' size:\n%s", dry.Bytes, out)
	}
	text, code := cli(t, "sessions", "prune", "--store", dsn, "--older-than", "1s", "--dry-run")
	if code != 0 || strings.Contains(text, " 0 B") || !strings.Contains(text, "that would free "+byteCount(dry.Bytes)+" of rows in the database") {
		t.Errorf("a dry prune's text: exit %d\n%s", code, text)
	}
	rep, _, out := pruneJSON(t, "--store", dsn, "--older-than", "1s")
	var sum int64
	for _, p := range rep.Deleted {
		if p.Bytes <= 0 {
			t.Errorf("session %s was deleted reporting %d bytes", p.ID, p.Bytes)
		}
		sum += p.Bytes
	}
	if len(rep.Deleted) != 2 || rep.Bytes != sum || rep.Bytes != dry.Bytes {
		t.Fatalf("the prune freed %d bytes (its sessions' %d), want what the dry run measured, %d:\n%s", rep.Bytes, sum, dry.Bytes, out)
	}
}
