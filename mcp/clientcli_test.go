package mcp

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// fakeCLIs points the CLIs at a script that tells the test when it runs
// (clitest.CallingCLIs), with dummy keys that make them usable.
func fakeCLIs(t *testing.T) (ran func() bool) {
	t.Helper()
	ran = clitest.CallingCLIs(t)
	// Dummy keys make the CLIs usable; the script never sends them.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test-dummy-not-a-key-openai")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy-not-a-key")
	t.Setenv("GEMINI_API_KEY", "test-dummy-not-a-key-gemini")
	return ran
}

// cliTeamCall names one CLI agent beside two sims; a CLI agent that fails is
// dropped, so a call that is let through still ends.
func cliTeamCall(spec string) string {
	return `{"task":"What is 17 * 23?","models":["` + spec + `","sim/strong","sim/strong"],"max_rounds":1,"timeout_seconds":60}`
}

// A client of an HTTP server is anyone holding a token: a coding-agent CLI
// it names runs a shell with the operator's key in its environment and the
// CLI's login in its home, which its task can print encoded. So over HTTP a
// client's CLI agent is refused, naming both ways in, and nothing is run.
func TestAnHTTPClientCannotNameACLIAgent(t *testing.T) {
	ran := fakeCLIs(t)
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{})
	c, _ := httpClient(t, ts.URL+"/mcp", false, nil)
	for _, spec := range []string{"codex/gpt-5.4", "claude_code", "gemini_cli/gemini-2.5-pro", "CODEX"} {
		wantError(t, callTool(t, c, "run_team", cliTeamCall(spec)), "operator_only",
			"coding-agent CLI", "--teams-dir", "--client-cli-agents")
	}
	// In an agent, as one item of a comma list, and as a checkpoint's
	// reviewer or the criteria's model alike.
	wantError(t, callTool(t, c, "start_team", `{"task":"x","agents":[{"model":"sim"},{"model":"claude_code"}]}`), "operator_only", "claude_code")
	wantError(t, callTool(t, c, "run_team", `{"task":"x","models":["sim,codex","sim"]}`), "operator_only", "codex")
	wantError(t, callTool(t, c, "checkpoint", `{"task":"x","models":["gemini_cli","sim"]}`), "operator_only", "gemini_cli")
	wantError(t, callTool(t, c, "generate_eval_criteria", `{"task":"x","model":"codex"}`), "operator_only", "codex")
	if ran() {
		t.Fatal("a refused CLI agent's binary ran")
	}
}

// The operator opts in with serve --client-cli-agents: then an HTTP
// client's CLI agent runs.
func TestAnHTTPClientNamesACLIAgentWhenTheOperatorAllowsIt(t *testing.T) {
	ran := fakeCLIs(t)
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{ClientCLIAgents: true})
	c, _ := httpClient(t, ts.URL+"/mcp", false, nil)
	res := callTool(t, c, "run_team", cliTeamCall("codex/gpt-5.4"))
	if strings.Contains(text(res), "operator_only") || strings.Contains(text(res), "--client-cli-agents") {
		t.Fatalf("refused with --client-cli-agents: %s", text(res))
	}
	waitRan(t, ran)
}

// A team file is the operator's: its CLI agents run for any HTTP client,
// and the session's follow-up turn (no models named) goes on with them.
func TestATeamFilesCLIAgentRunsForAnHTTPClient(t *testing.T) {
	ran := fakeCLIs(t)
	dir := teamsDir(t, map[string]string{"coders.yaml": "agents:\n  - id: coder\n    backend: {type: codex, model: gpt-5.4}\n  - id: a\n    backend: {type: sim, model: strong}\n  - id: b\n    backend: {type: sim, model: strong}\n"})
	ts := httpServer(t, newMemServer(t, Options{TeamsDir: dir}), HTTPOptions{})
	c, _ := httpClient(t, ts.URL+"/mcp", false, nil)
	res := callTool(t, c, "run_team", `{"team":"coders","task":"What is 17 * 23?","max_rounds":1,"session_id":"coders-1"}`)
	if res.IsError {
		t.Fatalf("a team file's CLI agent was refused: %s", text(res))
	}
	waitRan(t, ran)
	res = callTool(t, c, "run_team", `{"continue_from":"coders-1","task":"And 17 * 24?","max_rounds":1}`)
	if res.IsError && strings.Contains(text(res), "--client-cli-agents") {
		t.Fatalf("the follow-up of a team file's session was refused: %s", text(res))
	}
}

// Over stdio the client is the local user's own agent, whose keys they are:
// a CLI agent it names runs as before.
func TestAStdioClientNamesACLIAgent(t *testing.T) {
	ran := fakeCLIs(t)
	c := inProcess(t, newMemServer(t, Options{}), false)
	res := callTool(t, c, "run_team", cliTeamCall("claude_code"))
	if strings.Contains(text(res), "--client-cli-agents") {
		t.Fatalf("refused over stdio: %s", text(res))
	}
	waitRan(t, ran)
}

// list_backends over HTTP says a client cannot use the CLI backends.
func TestListBackendsOverHTTPMarksCLIAgentsOperatorOnly(t *testing.T) {
	fakeCLIs(t)
	for _, allowed := range []bool{false, true} {
		ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{ClientCLIAgents: allowed})
		c, _ := httpClient(t, ts.URL+"/mcp", false, nil)
		checkCLIBackends(t, c, !allowed)
	}
	checkCLIBackends(t, inProcess(t, newMemServer(t, Options{}), false), false)
}

func checkCLIBackends(t *testing.T, c *client.Client, refused bool) {
	t.Helper()
	var out listBackendsResult
	decode(t, callTool(t, c, "list_backends", `{}`), &out)
	seen := 0
	for _, b := range out.Backends {
		if b.Transport != "subprocess" {
			continue
		}
		seen++
		says := strings.Contains(b.Note, "--client-cli-agents")
		if refused && (b.Usable || !says) {
			t.Errorf("%s over HTTP: usable %v, note %q; want unusable, naming --client-cli-agents", b.Name, b.Usable, b.Note)
		}
		if !refused && (!b.Usable || says) {
			t.Errorf("%s: usable %v, note %q; want usable (its binary is set)", b.Name, b.Usable, b.Note)
		}
	}
	if seen != 3 {
		t.Errorf("%d CLI backends listed, want 3", seen)
	}
}

func waitRan(t *testing.T, ran func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ran() {
			return
		}
	}
	t.Fatal("the CLI agent's binary never ran")
}
