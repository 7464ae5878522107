package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session sessions cannot read is left out of the table, and the plain
// text says how many and how to see why (fsck), as --json says it
// (unreadable), where before only --json told: the table simply showed
// one session fewer.
func TestSessionsSaysHowManySessionsItCouldNotRead(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"team_good", "team_bad"} {
		if out, code := cli(t, "run", "--state-dir", dir, "--session-id", id, "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions", "team_bad", "session.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sessions", "--state-dir", dir}, {"sessions", "--state-dir", dir, "--all"}} {
		out, code := cli(t, args...)
		if code != 0 || !strings.Contains(out, "team_good") {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		if !strings.Contains(out, "1 session could not be read") || !strings.Contains(out, "massgen-mcp fsck --state-dir "+shellQuote(dir)+" all") {
			t.Errorf("%s does not say 1 session could not be read, nor how to see why:\n%s", strings.Join(args, " "), out)
		}
	}
	if out, _ := cli(t, "sessions", "--state-dir", dir, "--tenant", "default", "--grep", "nothing matches this"); !strings.Contains(out, "could not be read") {
		t.Errorf("a filtered page that skipped the unreadable session does not say so:\n%s", out)
	}
}
