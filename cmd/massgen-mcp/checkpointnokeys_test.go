package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestCheckpointWithoutKeysNamesTheModelsFlag: with no provider key there
// is no default team, and checkpoint says how to name one on its command
// line (--models), with an example that runs as printed: the user's own
// objective, reviewed by simulated agents, which need no key.
func TestCheckpointWithoutKeysNamesTheModelsFlag(t *testing.T) {
	isolateBackends(t, "")
	state := t.TempDir()
	objective := "Drop the legacy_orders table from the production database"
	out, code := cli(t, "checkpoint", "--state-dir", state, "--seed", "1", objective)
	if code != exitBadInput {
		t.Fatalf("exit %d, want %d:\n%s", code, exitBadInput, out)
	}
	m := regexp.MustCompile(`massgen-mcp checkpoint --state-dir (\S+) --models (\S+) '([^']*)'`).FindStringSubmatch(out)
	if m == nil || m[1] != shellQuote(state) || m[3] != objective {
		t.Fatalf("no --models example with this objective and state directory:\n%s", out)
	}
	if got, code := cli(t, "checkpoint", "--state-dir", m[1], "--models", m[2], "--seed", "1", m[3]); code != 0 || !strings.Contains(got, "Verdict:") {
		t.Errorf("the example %q: exit %d:\n%s", m[0], code, got)
	}
}

// TestRunWithoutKeysNamesTheModelsFlag: run says the same for its task.
func TestRunWithoutKeysNamesTheModelsFlag(t *testing.T) {
	isolateBackends(t, "")
	state := t.TempDir()
	out, code := cli(t, "run", "--state-dir", state, "What is 2 + 2?")
	if code != exitBadInput {
		t.Fatalf("exit %d, want %d:\n%s", code, exitBadInput, out)
	}
	m := regexp.MustCompile(`massgen-mcp run --state-dir (\S+) --models (\S+) '([^']*)'`).FindStringSubmatch(out)
	if m == nil || m[3] != "What is 2 + 2?" {
		t.Fatalf("no --models example with this task:\n%s", out)
	}
	if got, code := cli(t, "run", "--state-dir", m[1], "--models", m[2], "--seed", "1", m[3]); code != 0 {
		t.Errorf("the example %q: exit %d:\n%s", m[0], code, got)
	}
}
