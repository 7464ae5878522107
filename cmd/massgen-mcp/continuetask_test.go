package main

import (
	"strings"
	"testing"
)

// TestAFollowUpTurnWithoutATaskShowsAFollowUpTurn: run --continue ID with
// no task (off a terminal) said "e.g. massgen-mcp run --models sim,sim,sim
// ...", which, followed, names a new team for the turn instead of the one
// carried over; the example is the follow-up turn itself.
func TestAFollowUpTurnWithoutATaskShowsAFollowUpTurn(t *testing.T) {
	out, code := cli(t, "run", "--state-dir", t.TempDir(), "--continue", "bakery")
	if want := `massgen-mcp run --continue bakery "the next task"`; code != exitBadInput || !strings.Contains(out, want) || strings.Contains(out, "--models") {
		t.Errorf("run --continue with no task (exit %d) should show %q and no --models:\n%s", code, want, out)
	}
}
