package main

import (
	"regexp"
	"strings"
	"testing"
)

// run and status print, under consensus weighted, how much each agent's
// vote counted and why, and why round 0 ended the run (the SPRT lead of
// early_stop): not only the JSON says it.
func TestRunAndStatusSayHowEachWeightedVoteCounted(t *testing.T) {
	dir := t.TempDir()
	out, code := cli(t, "run", "--state-dir", dir, "--parallel", "1", "--models", "sim/strong,sim/strong,sim/strong,sim/strong,sim/strong", "--seed", "3",
		"--consensus", "weighted", "--short", "--early-stop", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	wants := []string{
		"Weights (consensus weighted: each agent's answer and vote count its weight):\n",
		"  agent_a (sim/strong)'s vote counts 1: no past short-answer sessions to judge it by\n",
		"How: stopped after round 0: 391 leads by 3.00, past the 2.94 that odds of 19 to 1 need, and 4 agents hold it",
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("run's output lacks %q:\n%s", want, out)
		}
	}
	id := regexp.MustCompile(`team_[0-9a-z_]+`).FindString(out)
	status, code := cli(t, "status", "--state-dir", dir, id)
	if code != 0 {
		t.Fatalf("status %s: exit %d:\n%s", id, code, status)
	}
	for _, want := range append(wants, "answer_format short, early_stop") {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}
