package main

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestToFixLinesKeepTheStateDir: a command run with --state-dir D printed
// To fix lines naming massgen-mcp status ID (and sessions, cancel, run
// --resume) without it, which, pasted, look in ./.massgen and find no such
// session, as the resume hint did before resumeCommand.
func TestToFixLinesKeepTheStateDir(t *testing.T) {
	dir := t.TempDir()
	s, err := newService(dir, 1).Create(context.Background(), coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "deny", "--state-dir", dir, "--session", s.ID, "nosuch")
	if want := "massgen-mcp status --state-dir " + shellQuote(dir) + " " + s.ID; code != exitBadInput || !strings.Contains(out, want) {
		t.Errorf("deny of an unknown ask (exit %d) should advise %q:\n%s", code, want, out)
	}
	out, code = cli(t, "approve", "--state-dir", dir, "--session", "team_nosuch", "abc123")
	if want := "massgen-mcp sessions --state-dir " + shellQuote(dir); code != exitBadInput || !strings.Contains(out, want) {
		t.Errorf("approve in a session that does not exist (exit %d) should advise %q:\n%s", code, want, out)
	}
}
