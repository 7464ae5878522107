package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// envStoreElsewhere is a PostgreSQL store $MASSGEN_STORE names in the
// shell, which the tests' file-store commands must never reach: nothing
// listens there, so a pasted hint that does reach it fails.
const envStoreElsewhere = "postgres://nobody@127.0.0.1:1/not-this-store"

// pasteHint is the printed command `massgen-mcp <verb> …` in out, as the
// arguments a shell would give it: up to the end of the line, a closing
// backtick, a closing parenthesis, or the advice's prose (" lists",
// " shows", ", or"). Temporary directories
// need no quoting, so fields split on spaces.
func pasteHint(t *testing.T, out, verb string) []string {
	t.Helper()
	m := regexp.MustCompile("massgen-mcp " + verb + `( [^` + "`" + `\n]*)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no massgen-mcp %s hint in:\n%s", verb, out)
	}
	line := m[1]
	for _, end := range []string{" lists", " shows", ", or", ")"} {
		if i := strings.Index(line, end); i >= 0 {
			line = line[:i]
		}
	}
	return append([]string{verb}, strings.Fields(line)...)
}

// TestFileStoreHintsReachTheFileStoreUnderAPostgresEnvironment: with
// $MASSGEN_STORE naming a PostgreSQL store, a command run against the file
// store (run, which keeps to it; a session command given --store file)
// prints follow-up commands that reach that file store when pasted in the
// same shell, not the PostgreSQL store the variable names.
func TestFileStoreHintsReachTheFileStoreUnderAPostgresEnvironment(t *testing.T) {
	t.Setenv("MASSGEN_STORE", envStoreElsewhere)
	state, proj := t.TempDir(), t.TempDir()

	// run keeps to the file store: its apply hint must too.
	out, code := cli(t, "run", "--state-dir", state, "--models", "sim,sim", "--seed", "2", "--session-id", "site", "--context-path", proj+":write", "Build a one-page landing site for a bakery")
	if code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, out)
	}
	apply := pasteHint(t, out, "apply")
	if !strings.Contains(strings.Join(apply, " "), "--store file") {
		t.Errorf("run's apply hint does not name the file store:\n%s", out)
	}
	if out, code := cli(t, apply...); code != 0 || !strings.Contains(out, "Applied to "+proj) {
		t.Errorf("pasted %q: exit %d:\n%s", apply, code, out)
	}

	for _, id := range []string{"team_a", "team_b"} {
		if out, code := cli(t, "run", "--state-dir", state, "--session-id", id, "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
	}
	// A session of the file store that cannot be read: sessions says fsck.
	if err := os.WriteFile(filepath.Join(state, "sessions", "team_b", "session.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, code = cli(t, "sessions", "--store", "file", "--state-dir", state, "--limit", "1")
	if code != 0 {
		t.Fatalf("sessions --store file: exit %d\n%s", code, out)
	}
	next := pasteHint(t, out, "sessions")
	if got, code := cli(t, next...); code != 0 || !strings.Contains(got, "Page 2 of") {
		t.Errorf("pasted %q: exit %d:\n%s", next, code, got)
	}
	fsck := pasteHint(t, out, "fsck")
	if got, code := cli(t, fsck...); !strings.Contains(got, "team_b") || strings.Contains(got, "PostgreSQL") {
		t.Errorf("pasted %q did not check the file store's sessions: exit %d:\n%s", fsck, code, got)
	}

	out, code = cli(t, "status", "--store", "file", "--state-dir", state, "team_nowhere")
	if code != exitBadInput {
		t.Fatalf("status of a missing session: exit %d\n%s", code, out)
	}
	list := pasteHint(t, out, "sessions")
	if got, code := cli(t, list...); code != 0 || !strings.Contains(got, "team_a") {
		t.Errorf("pasted %q: exit %d:\n%s", list, code, got)
	}
}

// TestADegradedRunsStatusHintReachesItsStateDirectory: the degraded exit's
// "massgen-mcp status <id> shows why" names the run's state directory, and
// the file store under a PostgreSQL $MASSGEN_STORE, so that it pastes.
func TestADegradedRunsStatusHintReachesItsStateDirectory(t *testing.T) {
	t.Setenv("MASSGEN_STORE", envStoreElsewhere)
	dir := t.TempDir()
	fails := filepath.Join(dir, "fails.json")
	os.WriteFile(fails, []byte(`[{"action":"error","content":"Prompt is too long"}]`), 0o644)
	out, code := cli(t, "run", "--plain", "--state-dir", dir, "--session-id", "team_degraded", "--models", "sim/script:file="+fails+",sim/strong", "--max-rounds", "1", "--seed", "1", "What is 17 * 23?")
	if code != exitDegraded {
		t.Fatalf("exit %d, want %d:\n%s", code, exitDegraded, out)
	}
	status := pasteHint(t, out[strings.Index(out, "degraded:"):], "status")
	if got, code := cli(t, status...); code != 0 || !strings.Contains(got, "Prompt is too long") {
		t.Errorf("pasted %q: exit %d:\n%s", status, code, got)
	}
}
