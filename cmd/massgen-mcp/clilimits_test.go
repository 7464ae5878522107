package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// TestARealClaudeCodeThatLoopsIsStoppedByTheBudgetWithinATurn is issue
// 26's `run --budget 1 --models claude_code,sim/strong,sim/strong`: the
// model behind Claude Code answers every turn with another Read at $0.50 a
// turn (100,000 input tokens at claude-opus-4-6's prices). The run ends
// "stopped by budget" under $1 plus one such turn, instead of looping on.
func TestARealClaudeCodeThatLoopsIsStoppedByTheBudgetWithinATurn(t *testing.T) {
	claude := realClaude(t)
	script := fake.NewScript()
	script.Default = func(c fake.Call) fake.Reply {
		if !strings.Contains(string(c.Body), "mcp__workflow__") {
			return fake.DefaultReply(c)
		}
		return fake.Reply{Kind: fake.ReplyToolCall, Tool: "Read", Input: json.RawMessage(`{"file_path":"/etc/hostname"}`),
			Usage: &fake.Usage{Input: 100000, Output: 100}}
	}
	// The exit status of a budget stop is not this test's concern (exit.go
	// decides it); the result is.
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()
	cmd := exec.Command(binary(t), "run", "--state-dir", t.TempDir(), "--plain", "--json", "--seed", "1", "--budget", "1",
		"--models", "claude_code,sim/strong,sim/strong", "What is 17 * 23?")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "CLAUDE_BIN=" + claude,
		"ANTHROPIC_API_KEY=" + plantedKeys["ANTHROPIC_API_KEY"], "ANTHROPIC_BASE_URL=" + srv.URL, "CLAUDE_CODE_MAX_RETRIES=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	out := stdout.String()
	var res coordination.TeamResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v (run: %v)\n%s\nstderr:\n%s", err, runErr, out, stderr.String())
	}
	if res.StopReason == nil || *res.StopReason != coordination.StopBudget || res.CostUSD == nil {
		t.Fatalf("want a run stopped by budget, with its cost: %s", out)
	}
	calls := 0
	for _, c := range script.Calls() {
		if strings.Contains(string(c.Body), "mcp__workflow__") {
			calls++
		}
	}
	t.Logf("stopped by budget at $%.4f, %d tokens, after %d of claude's model calls", *res.CostUSD, res.Usage.Input+res.Usage.Output, calls)
	if *res.CostUSD > 1+0.5+0.05 {
		t.Fatalf("spent $%.4f: more than the $1 budget plus one $0.50 turn", *res.CostUSD)
	}
}
