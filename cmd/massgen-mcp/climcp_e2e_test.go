package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox/sandboxtest"
)

// probeToken is the secret the team file gives its MCP server through
// ${PROBE_TOKEN}; it must never reach the CLI's files, the state directory
// or the output.
const probeToken = "dummy-planted-probe-token-not-a-key-42"

// mcpCallingPolicy plays the model behind a real Claude Code agent whose
// team gave it an MCP server: in its blind step it calls the server's echo
// tool through the workflow server, then answers with what it heard; offered
// a vote, it votes; once its call is recorded, it ends its turn.
func mcpCallingPolicy(c fake.Call) fake.Reply {
	body := string(c.Body)
	if !strings.Contains(body, `"mcp__workflow__new_answer"`) && !strings.Contains(body, `"mcp__workflow__vote"`) {
		return fake.DefaultReply(c)
	}
	last := lastContent(c.Body)
	switch {
	case strings.Contains(last, "Recorded your"):
		return fake.Reply{Kind: fake.ReplyText, Content: "Submitted; my step is done."}
	case strings.Contains(body, `"mcp__workflow__vote"`):
		return claudeCodePolicy(c) // the vote, as in the file-writing test
	case strings.Contains(last, "echo: 391"):
		return fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer",
			Input: json.RawMessage(`{"content":"The probe server said \"echo: 391\".\nAnswer: 391"}`)}
	case strings.Contains(last, "tool_result"): // the call failed: say how, once
		content, _ := json.Marshal(map[string]string{"content": "The probe server failed: " + last + "\nAnswer: 391"})
		return fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: content}
	}
	return fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__probe__echo", Input: json.RawMessage(`{"text":"391"}`)}
}

// TestARealClaudeCodeAgentCallsItsTeamsMCPServerEndToEnd: the whole chain
// in one run of the binary. A team file gives a claude_code agent a stdio
// MCP server with a ${VAR} secret; the run starts the server in the
// sandbox, the real Claude Code calls its tool through the workflow
// server, the call runs in massgen-mcp and lands in the step's tools.jsonl,
// the agent's answer carries the result, no server outlives the run, and
// its secret is nowhere but in its own process.
func TestARealClaudeCodeAgentCallsItsTeamsMCPServerEndToEnd(t *testing.T) {
	claude := realClaude(t)
	sandboxtest.Need(t)
	binDir := t.TempDir()
	probe := filepath.Join(binDir, "probe-mcp-server")
	if out, err := exec.Command("go", "build", "-o", probe, "../../providers/tools/testdata/mcpserver").CombinedOutput(); err != nil {
		t.Fatalf("building the probe server: %v\n%s", err, out)
	}
	team := filepath.Join(t.TempDir(), "team.yaml")
	writeTeam := func(yaml string) {
		if err := os.WriteFile(team, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTeam(`agents:
  - model: claude_code
    mcp_servers:
      probe: {type: stdio, command: ` + probe + `, env: {MCPSERVER_TOKEN: "${PROBE_TOKEN}"}}
  - model: sim/strong
  - model: sim/strong
`)

	script := fake.NewScript()
	script.Default = mcpCallingPolicy
	out, errs, state, home := runWithClaude(t, claude, script, []string{"PROBE_TOKEN=" + probeToken},
		"--plain", "--json", "--seed", "1", "--config", team, "What is 17 * 23?")
	res, answer := finishedRun(t, out, "agent_a")
	if !strings.Contains(answer, `The probe server said "echo: 391"`) {
		t.Fatalf("claude_code's answer does not carry the MCP tool's result: %q\n%s", answer, out)
	}
	log, err := os.ReadFile(filepath.Join(res.SessionDir, "agents", "agent_a", "001", "tools.jsonl"))
	if err != nil || strings.Count(string(log), `"name":"mcp__probe__echo"`) != 1 || strings.Contains(string(log), `"is_error":true`) {
		t.Fatalf("claude_code's tools.jsonl should hold its one MCP call, answered: %s, %v", log, err)
	}
	// No server process outlives the run. (That the servers close with the
	// session while the process lives is coordination's test: here the
	// sandbox's die-with-parent would end them too.)
	clitest.AssertNoProcessIn(t, binDir)
	// Its secret stayed in its process: not in the CLI's home, the state
	// directory or what the run printed.
	for _, dir := range []string{state, home} {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(probeToken)) {
					t.Errorf("the MCP server's secret is in %s", p)
				}
			}
			return nil
		})
	}
	if strings.Contains(out+errs, probeToken) {
		t.Error("the MCP server's secret is in the run's output")
	}
	assertNoKeys(t, state, out, errs)
}
