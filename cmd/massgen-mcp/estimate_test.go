package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunEstimatePrintsTheWorstCaseAndSpendsNothing: `run --estimate` needs
// no key, writes no session and exits as bad input when the budget cannot
// pay for one round, saying so with the figures; a budget that can pay
// exits 0.
func TestRunEstimatePrintsTheWorstCaseAndSpendsNothing(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	dir := t.TempDir()
	out, code := cli(t, "run", "--estimate", "--state-dir", dir, "--budget", "0.05",
		"--models", "openai/gpt-5.4,sim:price_in=10:price_out=40,sim", "What is 17 * 23?")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (bad input):\n%s", code, out)
	}
	for _, want := range []string{"nothing was run or spent", "agent_a (openai/gpt-5.4): prompt ~", "8192* tokens", "agent_c (sim)", "free",
		"cannot pay for one round of these 3 agents: about $0.", "at list prices in the worst case"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "sessions")); len(entries) != 0 {
		t.Fatalf("an estimate wrote %d sessions", len(entries))
	}
	out, code = cli(t, "run", "--estimate", "--state-dir", dir, "--budget", "5", "--models", "openai/gpt-5.4,sim,sim", "What is 17 * 23?")
	if code != 0 || !strings.Contains(out, "The budget pays for one round") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
