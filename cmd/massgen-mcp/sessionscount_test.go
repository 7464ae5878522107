package main

import (
	"strings"
	"testing"
)

// TestSessionsCountsOneSessionInTheSingular: "Page 1 of 1 (1 sessions)".
func TestSessionsCountsOneSessionInTheSingular(t *testing.T) {
	dir := t.TempDir()
	if out, code := cli(t, "run", "--state-dir", dir, "--models", "sim/strong,sim/strong", "--seed", "1", "What is 2 * 3?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if out, _ := cli(t, "sessions", "--state-dir", dir); !strings.Contains(out, "Page 1 of 1 (1 session)") {
		t.Errorf("sessions:\n%s", out)
	}
}
