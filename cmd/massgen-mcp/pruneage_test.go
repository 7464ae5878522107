package main

import (
	"strings"
	"testing"
	"time"
)

// TestPruneAgesTakeDaysAndWeeksAndRefuseMonths: --older-than takes Go
// durations and whole days and weeks; "1mo" and "1M" (a month? a minute?)
// and years are refused saying which units there are, and --help says them
// too, since "1m" is a minute, which a user meaning a month finds out only
// by what is gone.
func TestPruneAgesTakeDaysAndWeeksAndRefuseMonths(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "90m": 90 * time.Minute, "1m": time.Minute, "720h": 720 * time.Hour} {
		if d, err := parseAge(in); err != nil || d != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct{ age, want string }{
		{"1mo", "months differ in length: give days (30d) or weeks (4w)"},
		{"1M", `"M" is no unit: m is minutes; for a month give days (30d) or weeks (4w)`},
		{"1y", "years differ in length: give days (365d)"},
		{"soon", "s, m (minutes), h, d (days) or w (weeks)"},
		{"0w", "not a positive age"},
	} {
		out, code := cli(t, "sessions", "prune", "--state-dir", dir, "--older-than", tc.age)
		if code != exitBadInput || !strings.Contains(out, tc.want) {
			t.Errorf("--older-than %s: exit %d, want %d saying %q:\n%s", tc.age, code, exitBadInput, tc.want, out)
		}
	}
	if out, _ := cli(t, "sessions", "prune", "--help"); !strings.Contains(out, "m (minutes), h, d (days) or w (weeks)") {
		t.Errorf("prune --help does not say the units --older-than takes:\n%s", out)
	}
}

// TestPruneSaysTheCutoffInWords: a prune (and its --dry-run) says the
// cutoff as a time and as an age in words ("1 minute ago"), so that "1m"
// read as a month shows as a minute before anything is deleted.
func TestPruneSaysTheCutoffInWords(t *testing.T) {
	dir := t.TempDir()
	if out, code := cli(t, "run", "--state-dir", dir, "--session-id", "old1", "--models", "sim/strong,sim/strong", "--seed", "1", "What is 2 * 3?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code := cli(t, "sessions", "prune", "--state-dir", dir, "--older-than", "1m", "--dry-run")
	if code != 0 || !strings.Contains(out, "No session to prune: none ended and last active before ") || !strings.Contains(out, "(1 minute ago)") {
		t.Errorf("a dry run with nothing old enough does not say the cutoff in words (exit %d):\n%s", code, out)
	}
	out, code = cli(t, "sessions", "prune", "--state-dir", dir, "--older-than", "2w", "--dry-run")
	if code != 0 || !strings.Contains(out, "(2 weeks ago)") {
		t.Errorf("a dry run of --older-than 2w does not say 2 weeks (exit %d):\n%s", code, out)
	}
	time.Sleep(1100 * time.Millisecond)
	out, code = cli(t, "sessions", "prune", "--state-dir", dir, "--older-than", "1s", "--dry-run")
	if code != 0 || !strings.Contains(out, "Would delete 1 session, ended and last active before ") || !strings.Contains(out, "(1 second ago)") {
		t.Errorf("a dry run does not say the cutoff in words (exit %d):\n%s", code, out)
	}
}
