package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A winner the team did not agree on is not a silent success: the run exits
// with a code for why it stopped, and says so plainly with the spend.
func TestARunWithoutAgreementExitsByWhyItStopped(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return "sim/script:file=" + p
	}
	answers := script("answer.json", `[{"action":"new_answer","content":"Answer: 391"}]`)
	answersThenFails := script("fails.json", `[{"action":"new_answer","content":"Answer: 391"},{"action":"error","content":"Invalid auth method selected"},{"action":"error","content":"Invalid auth method selected"}]`)
	priced := "sim/strong:price_in=900"
	for _, tc := range []struct {
		name string
		args []string
		code int
		says *regexp.Regexp
	}{
		// The worst case of round 0 ($0.91 at these prices) fits the budget;
		// the run stops by budget after a step or two more (the launch
		// check counts on the mean step, so it may pass $1 by one step).
		{"budget", []string{"--models", priced + "," + priced + "," + priced, "--budget", "1"}, exitLimitForced,
			regexp.MustCompile(`(?m)^Not agreed: stopped by budget after \$[01]\.\d\d of \$1\.00: agent_[abc]'s answer was taken first-come, without agreement\.$`)},
		{"agents failed", []string{"--models", answersThenFails + "," + answersThenFails}, exitFailedForced,
			// Which agent drops first is the race of two parallel steps.
			regexp.MustCompile(`(?m)^Not agreed: stopped (with one agent left \(1 agent dropped\)|because agents failed \(2 agents dropped\)): agent_[ab]'s answer was taken (as the last agent left|first-come), without agreement\.$`)},
		{"max rounds", []string{"--models", answers + "," + answers, "--max-rounds", "1"}, exitSplitForced,
			regexp.MustCompile(`(?m)^Not agreed: stopped at max_rounds \(1\): agent_[ab]'s answer was taken first-come, without agreement\.$`)},
		{"consensus", []string{"--models", "sim/strong,sim/strong,sim/strong"}, exitOK, nil},
	} {
		out, code := cli(t, append(append([]string{"run", "--plain", "--state-dir", dir, "--seed", "1"}, tc.args...), "What is 17 * 23?")...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d:\n%s", tc.name, code, tc.code, out)
		}
		if tc.says == nil {
			if strings.Contains(out, "Not agreed") {
				t.Errorf("%s: an agreed run says it was not:\n%s", tc.name, out)
			}
			continue
		}
		if !tc.says.MatchString(out) {
			t.Errorf("%s: output lacks %s:\n%s", tc.name, tc.says, out)
		}
	}
	help, _ := cli(t, "run", "--help")
	for _, want := range []string{"Exit codes:", "0  the team agreed", "5  an answer the team did not agree on: the budget or the timeout", "6  an answer", "7  an answer"} {
		if !strings.Contains(help, want) {
			t.Errorf("run --help lacks %q:\n%s", want, help)
		}
	}
}

// A degraded run points only at what it printed: no "see Dropped above"
// when nobody was dropped.
func TestADegradedRunWithNobodyDroppedNamesWhoNeverAnswered(t *testing.T) {
	dir := t.TempDir()
	fails := filepath.Join(dir, "fails.json")
	os.WriteFile(fails, []byte(`[{"action":"error","content":"Prompt is too long"}]`), 0o644)
	out, code := cli(t, "run", "--plain", "--state-dir", dir, "--models", "sim/script:file="+fails+",sim/strong", "--max-rounds", "1", "--seed", "1", "What is 17 * 23?")
	if code != exitDegraded {
		t.Fatalf("exit %d, want %d:\n%s", code, exitDegraded, out)
	}
	if strings.Contains(out, "Dropped:") || strings.Contains(out, "Dropped lines") {
		t.Errorf("nobody was dropped, yet the output speaks of Dropped:\n%s", out)
	}
	for _, want := range []string{"failed (provider): Prompt is too long", "degraded: only 1 agent of a team of 2 answered; agent_a never did (massgen-mcp status --state-dir " + shellQuote(dir) + " team_"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestErrorsSayWhatToDoInTheCLIsWords: the core's refusals carry facts and
// the CLI words the fix in its own commands and flags — `massgen-mcp status
// <id>`, `run --resume <id>`, `sessions` — never an MCP tool.
func TestErrorsSayWhatToDoInTheCLIsWords(t *testing.T) {
	mcpWords := []string{"run_team", "start_team", "team_status", "finalize_team", "cancel_team", "seen_steps", "massgen://"}
	says := func(name, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q lacks %q", name, out, w)
			}
		}
		for _, w := range mcpWords {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q names %q, an MCP word", name, out, w)
			}
		}
	}
	// Through the commands.
	dir := t.TempDir()
	out, code := cli(t, "status", "--state-dir", dir, "team_missing")
	if code != exitBadInput {
		t.Errorf("a missing session: exit %d, want %d", code, exitBadInput)
	}
	says("a missing session", out, `"team_missing" not found`, "To fix: massgen-mcp sessions --state-dir "+shellQuote(dir)+" lists the sessions")
	out, _ = cli(t, "run", "--state-dir", dir, "--models", "sim,host", "x")
	says("a host agent in a run", out, "agent_b is a host agent", "To fix: ", "name models, not host")

	// Through the one mapper, for refusals a test cannot easily stage.
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"a session run elsewhere", fmt.Errorf("cannot resume: %w", &coordination.RunningError{Session: "team_1", By: "run-7 (pid 412 on build-1, alive at 2026-12-01T10:00:00Z)"}),
			[]string{"pid 412 on build-1", "massgen-mcp status --watch team_1", "massgen-mcp cancel team_1", "massgen-mcp run --resume team_1"}},
		{"a step in flight", &coordination.BusyError{Session: "team_1", Agent: "agent_a"}, []string{`agent "agent_a"`, "massgen-mcp status team_1 shows the agents in flight"}},
		{"a decided session", &coordination.FinishedError{Session: "team_1", Status: coordination.StatusDecided, Winner: "agent1.2"}, []string{"agent1.2 wins", "massgen-mcp run --resume team_1 writes its final answer"}},
		{"a finished session", &coordination.FinishedError{Session: "team_1", Status: coordination.StatusFinished, Stop: coordination.StopConsensus}, []string{"ended (consensus)", "massgen-mcp status team_1 shows its result"}},
		{"a stale view", &coordination.StaleViewError{Agent: "agent_a", Why: coordination.ViewMissing}, nil},
	} {
		says(tc.name, errorText(tc.err), tc.want...)
	}
}
