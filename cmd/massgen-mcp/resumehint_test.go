package main

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestCancelsResumeHintKeepsTheStateDir: cancel --state-dir D printed
// "massgen-mcp run --resume ID continues it.", which, pasted, looks in
// ./.massgen and finds no such session.
func TestCancelsResumeHintKeepsTheStateDir(t *testing.T) {
	dir := t.TempDir()
	s, err := newService(dir, 1).Create(context.Background(), coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "cancel", "--state-dir", dir, s.ID)
	if code != 0 || !strings.Contains(out, "massgen-mcp run --state-dir "+dir+" --resume "+s.ID+" continues it.") {
		t.Errorf("cancel (exit %d):\n%s", code, out)
	}
}

// TestEveryHintKeepsWhereTheSessionIs: every command a hint prints (status
// --watch, cancel, run --resume, sessions) carries the --state-dir and
// --tenant the user gave, so pasting it finds the session. run has no
// --tenant: a tenant's session is resumed with its directory as the state
// dir. Before, status --watch, the "To fix" lines and cancel under a
// tenant printed massgen-mcp run --resume ID, which looks in ./.massgen.
func TestEveryHintKeepsWhereTheSessionIs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tdir, err := tenantState(dir, "acme")
	if err != nil {
		t.Fatal(err)
	}
	says := func(name, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", name, w, out)
			}
		}
	}
	cancelled := func(d string) string {
		svc := newService(d, 1)
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Cancel(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}

	id := cancelled(dir)
	out, _ := cli(t, "status", "--watch", "--plain", "--state-dir", dir, id)
	says("status --watch of a cancelled session", out, "resume with: massgen-mcp run --state-dir "+dir+" --resume "+id)

	tid := cancelled(tdir)
	out, _ = cli(t, "status", "--watch", "--plain", "--state-dir", dir, "--tenant", "acme", tid)
	says("status --watch of a tenant's cancelled session", out, "resume with: massgen-mcp run --state-dir "+tdir+" --resume "+tid)

	live, err := newService(tdir, 1).Create(ctx, coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = cli(t, "cancel", "--state-dir", dir, "--tenant", "acme", live.ID)
	says("cancel of a tenant's session", out, "massgen-mcp run --state-dir "+tdir+" --resume "+live.ID+" continues it.")

	out, _ = cli(t, "status", "--state-dir", dir, "team_missing")
	says("a missing session", out, "To fix: massgen-mcp sessions --state-dir "+dir+" lists the sessions")

	// Through the one mapper, for refusals a test cannot easily stage.
	_, at, done, err := storeService(ctx, dir, "", "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	flags := " --state-dir " + dir + " --tenant acme"
	says("a session run elsewhere", errorText(at.wrap(&coordination.RunningError{Session: "team_1", By: "run-7"}, "team_1")),
		"massgen-mcp status --watch"+flags+" team_1", "massgen-mcp cancel"+flags+" team_1", "massgen-mcp run --state-dir "+tdir+" --resume team_1")
	says("a decided session", errorText(at.wrap(&coordination.FinishedError{Session: "team_1", Status: coordination.StatusDecided, Winner: "agent1.2"}, "team_1")),
		"massgen-mcp run --state-dir "+tdir+" --resume team_1 writes its final answer", "massgen-mcp status"+flags+" team_1 shows the winner")
}
