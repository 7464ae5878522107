package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// realClaude is the pinned Claude Code `make test` installs, or a skip (a
// failure under CI or MASSGEN_REAL_CLIS=1).
func realClaude(t *testing.T) string {
	t.Helper()
	if os.Getenv("MASSGEN_REAL_CLIS") == "0" {
		t.Skip("MASSGEN_REAL_CLIS=0: the real claude CLI is not run")
	}
	if p := os.Getenv("CLAUDE_BIN"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../.cache/clients/node_modules/.bin/claude")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" || os.Getenv("MASSGEN_REAL_CLIS") == "1" {
		t.Fatalf("the real claude CLI is missing (%s): make test installs it (bash e2e/install-clis.sh)", p)
	}
	t.Skip("the real claude CLI is not installed (bash e2e/install-clis.sh)")
	return ""
}

var workspaceLine = regexp.MustCompile(`Your current directory, (\S+), is your own workspace`)

// claudeCodePolicy plays the model behind a real Claude Code agent: in a
// blind step it creates answer.txt in its workspace with Edit, then calls
// new_answer through the workflow server; offered a vote, it votes for the
// first name it may; once the server recorded its call, it ends its turn.
// API agents get the fakes' default.
func claudeCodePolicy(c fake.Call) fake.Reply {
	var req struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties struct {
					AgentID struct {
						Enum []string `json:"enum"`
					} `json:"agent_id"`
				} `json:"properties"`
			} `json:"input_schema"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(c.Body, &req)
	workflow := false
	var enum []string
	for _, t := range req.Tools {
		if strings.HasPrefix(t.Name, "mcp__workflow__") {
			workflow = true
		}
		if t.Name == "mcp__workflow__vote" {
			enum = t.InputSchema.Properties.AgentID.Enum
		}
	}
	if !workflow {
		return fake.DefaultReply(c)
	}
	last := lastContent(c.Body)
	switch {
	case strings.Contains(last, "Recorded your"):
		return fake.Reply{Kind: fake.ReplyText, Content: "Submitted; my step is done."}
	case len(enum) > 0:
		return fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__vote",
			Input: json.RawMessage(`{"agent_id":"` + enum[0] + `","reason":"its 391 is right and shown whole"}`)}
	case strings.Contains(last, "tool_result"):
		return fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer",
			Input: json.RawMessage(`{"content":"17 * 23 = 391 (see answer.txt in my workspace).\nAnswer: 391"}`)}
	}
	ws := "/workspace"
	if m := workspaceLine.FindSubmatch(c.Body); m != nil {
		ws = string(m[1])
	}
	input, _ := json.Marshal(map[string]string{"file_path": ws + "/answer.txt", "old_string": "", "new_string": "17 * 23 = 391\n"})
	return fake.Reply{Kind: fake.ReplyToolCall, Tool: "Edit", Input: input}
}

// runWithClaude runs the binary (run, then args) with a real Claude Code
// agent and the API agents pointed at a fake server playing script, in an
// empty working directory and a private home; it fails the test if the run
// fails.
func runWithClaude(t *testing.T, claude string, script *fake.Script, env []string, args ...string) (stdout, stderr, state, home string) {
	t.Helper()
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()
	state, home = t.TempDir(), t.TempDir()
	cmd := exec.Command(binary(t), append([]string{"run", "--state-dir", state}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CLAUDE_BIN=" + claude,
		"ANTHROPIC_API_KEY=" + plantedKeys["ANTHROPIC_API_KEY"], "ANTHROPIC_BASE_URL=" + srv.URL, "CLAUDE_CODE_MAX_RETRIES=1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	return out.String(), errb.String(), state, home
}

// finishedRun reads run --json's result, which must be finished with a winner,
// and agent's latest answer in it.
func finishedRun(t *testing.T, stdout, agent string) (res coordination.TeamResult, answer string) {
	t.Helper()
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Status != "finished" || res.Winner == nil {
		t.Fatalf("result: %s", stdout)
	}
	for _, a := range res.Answers {
		if a.AgentID == agent {
			answer = a.Content
		}
	}
	return res, answer
}

// lastContent is the content of a Messages request's last message, as JSON
// text: what the CLI just sent back (a tool's result, the workflow
// server's word).
func lastContent(body []byte) string {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	if n := len(req.Messages); n > 0 {
		return string(req.Messages[n-1].Content)
	}
	return ""
}

func TestARealClaudeCodeAgentWritesItsFileAndReachesConsensusWithTheTeam(t *testing.T) {
	claude := realClaude(t)
	script := fake.NewScript()
	script.Default = claudeCodePolicy
	args := []string{"--plain", "--json", "--seed", "1", "--models", "claude_code,sim/strong,sim/strong", "What is 17 * 23? Put the working in answer.txt."}
	transcript := os.Getenv("MASSGEN_TRANSCRIPT")
	if transcript != "" {
		args = args[:1] // the human rendering, for the README
		args = append(args, "--models", "claude_code,sim/strong,sim/strong", "What is 17 * 23? Put the working in answer.txt.")
	}
	out, errs, state, _ := runWithClaude(t, claude, script, nil, args...)
	if transcript != "" {
		os.WriteFile(transcript, []byte(out), 0o644)
		t.Skip("transcript written to " + transcript)
	}
	res, claudeAnswer := finishedRun(t, out, "agent_a")
	if !strings.Contains(claudeAnswer, "Answer: 391") {
		t.Fatalf("claude_code's answer: %q\n%s", claudeAnswer, out)
	}
	data, err := os.ReadFile(filepath.Join(res.SessionDir, "agents", "agent_a", "001", "workspace", "answer.txt"))
	if err != nil || string(data) != "17 * 23 = 391\n" {
		t.Fatalf("claude_code's file in its answer's snapshot: %q, %v", data, err)
	}
	// Its Edit is in the step's tools.jsonl, as a file change.
	log, err := os.ReadFile(filepath.Join(res.SessionDir, "agents", "agent_a", "001", "tools.jsonl"))
	if err != nil || !strings.Contains(string(log), `"kind":"file_change"`) || !strings.Contains(string(log), `"name":"Edit"`) {
		t.Fatalf("claude_code's tools.jsonl: %s, %v", log, err)
	}
	// No generated config ever reaches a workspace or a snapshot.
	filepath.Walk(state, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && (info.Name() == "mcp.json" || info.Name() == "system.md" || info.Name() == "view.json") {
			t.Errorf("a generated config is in the state directory: %s", p)
		}
		return nil
	})
	workflowCalls := 0
	for _, c := range script.Calls() {
		if strings.Contains(string(c.Body), "mcp__workflow__") {
			workflowCalls++
		}
	}
	if workflowCalls < 3 {
		t.Fatalf("claude made %d requests with the workflow tools; want its answer and its vote", workflowCalls)
	}
	assertNoKeys(t, state, out, errs)
	t.Logf("winner %s, %d steps, claude's usage %+v", res.Winner.AgentID, res.Steps, res.Usage)
}

func TestWorkflowServerStartedByHandSaysWhatItIsFor(t *testing.T) {
	out, code := cli(t, "workflow-server")
	if code != 1 || !strings.Contains(out, "--view is required; the workflow server is started by a CLI agent's step") {
		t.Fatalf("exit %d: %s", code, out)
	}
	view := filepath.Join(t.TempDir(), "view.json")
	os.WriteFile(view, []byte(`{"socket":"/nowhere.sock"}`), 0o600)
	out, code = cli(t, "workflow-server", "--view", view)
	if code != 1 || !strings.Contains(out, "offers no workflow tool") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestMaxCLIAgentsBoundsTheServersCLIProcesses(t *testing.T) {
	defer cliagent.SetMaxProcesses(0)
	out, code := cli(t, "run", "--max-cli-agents", "3", "--state-dir", t.TempDir(), "--plain", "--models", "sim/strong,sim/strong", "--seed", "1", "What is 2 + 2?")
	if code != 0 || cliagent.MaxProcesses() != 3 {
		t.Fatalf("exit %d, bound %d: %s", code, cliagent.MaxProcesses(), out)
	}
	out, _ = cli(t, "serve", "--help")
	if !strings.Contains(out, "--max-cli-agents") {
		t.Errorf("serve --help lacks --max-cli-agents:\n%s", out)
	}
}

// --client-cli-agents is an HTTP server's opt-in: serve --help shows it, and
// over stdio, where clients may always name CLI agents, it is refused as
// meaningless rather than read as a setting that did something.
func TestClientCLIAgentsIsAnHTTPFlag(t *testing.T) {
	out, _ := cli(t, "serve", "--help")
	if !strings.Contains(out, "--client-cli-agents") {
		t.Errorf("serve --help lacks --client-cli-agents:\n%s", out)
	}
	out, code := cli(t, "serve", "--client-cli-agents", "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(out, "--client-cli-agents only apply with --http") {
		t.Errorf("serve --client-cli-agents over stdio: exit %d: %s", code, out)
	}
}
