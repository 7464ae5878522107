package main

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestApproveWithANamedSessionSaysWhatIsWrongAndWhatToDo: found walking the
// README as a newcomer. With --session, an unknown ask read "no such
// approval request: nosuch in /…/sessions/X: invalid input" — the category
// last, no next step — and a session that does not exist read the same, as
// if it had merely no such ask.
func TestApproveWithANamedSessionSaysWhatIsWrongAndWhatToDo(t *testing.T) {
	dir := t.TempDir()
	svc := newService(dir, 1)
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "deny", "--state-dir", dir, "--session", s.ID, "nosuch")
	if code != exitBadInput || !strings.Contains(out, "error: invalid input: ") || strings.HasSuffix(strings.TrimSpace(strings.Split(out, "\n")[0]), "invalid input") ||
		!strings.Contains(out, "To fix: ") || !strings.Contains(out, "massgen-mcp status --state-dir "+shellQuote(dir)+" "+s.ID) {
		t.Errorf("deny of an unknown ask in a named session: exit %d\n%s", code, out)
	}
	out, code = cli(t, "approve", "--state-dir", dir, "--session", "team_nosuch", "abc123")
	if code != exitBadInput || !strings.Contains(out, "no such session") || strings.Contains(out, "approval request") {
		t.Errorf("approve in a session that does not exist: exit %d\n%s", code, out)
	}
}
