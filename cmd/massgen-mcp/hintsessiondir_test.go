package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// TestHintsOfASessionNamedByItsDirectoryReachIt: status and status --watch
// take a session's directory as well as its id; the commands they then
// print must reach the store that directory is in. Before, status --watch
// <state>/sessions/<id> of a cancelled session advised massgen-mcp run
// --resume <id> (no --state-dir), which, pasted, looks in ./.massgen and
// finds nothing, and status of an interrupted session advised a bare
// "run --resume <id>" even with --state-dir given.
func TestHintsOfASessionNamedByItsDirectoryReachIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tdir, err := tenantState(dir, "acme")
	if err != nil {
		t.Fatal(err)
	}
	says := func(name, out string, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("%s: lacks %q:\n%s", name, want, out)
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
	out, _ := cli(t, "status", "--watch", "--plain", filepath.Join(dir, "sessions", id))
	says("status --watch of a cancelled session's directory", out, "resume with: massgen-mcp run --state-dir "+shellQuote(dir)+" --resume "+id)

	tid := cancelled(tdir)
	out, _ = cli(t, "status", "--watch", "--plain", filepath.Join(tdir, "sessions", tid))
	says("status --watch of a tenant's cancelled session's directory", out, "resume with: massgen-mcp run --state-dir "+shellQuote(tdir)+" --resume "+tid)

	// A run whose process died: its lease ran out unreleased.
	dead, err := newService(dir, 1).Create(ctx, coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filestore.New(dir).AcquireRun(ctx, dead.ID, coordination.LeaseOwner{ID: "dead-run", Host: "elsewhere", PID: 1}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(coordination.MaxClockSkew + 200*time.Millisecond) // past the lease and the clock skew it allows
	want := "massgen-mcp run --state-dir " + shellQuote(dir) + " --resume " + dead.ID
	for name, args := range map[string][]string{
		"status of an interrupted session's directory": {"status", filepath.Join(dir, "sessions", dead.ID)},
		"status --state-dir of an interrupted session": {"status", "--state-dir", dir, dead.ID},
	} {
		out, code := cli(t, args...)
		if !strings.Contains(out, "Interrupted:") {
			t.Fatalf("%s: not read interrupted (exit %d):\n%s", name, code, out)
		}
		says(name, out, want)
	}
}
