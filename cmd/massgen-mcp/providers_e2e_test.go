package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary is the massgen-mcp binary under test: MASSGEN_TEST_BIN when set
// (make test builds bin/massgen-mcp once for these tests, e2e and the
// clients), else built once per test run. Every test here that runs the
// binary as a process uses it.
func binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if p := os.Getenv("MASSGEN_TEST_BIN"); p != "" {
		return p
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "massgen-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "massgen-mcp")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("build: %v\n%s", binErr, binPath)
	}
	return binPath
}

// plantedKeys are recognisable dummy keys; none may ever be echoed.
var plantedKeys = map[string]string{
	"OPENAI_API_KEY":    "dummy.planted.openai.not-a-key",
	"ANTHROPIC_API_KEY": "dummy.planted.anthropic.not-a-key",
	"GEMINI_API_KEY":    "dummy.planted.gemini.not-a-key",
	"XAI_API_KEY":       "dummy.planted.grok.not-a-key",
}

const providerTeam = "openai/gpt-5-mini,claude/claude-haiku-4-5,gemini/gemini-2.5-flash,grok/grok-4"

// runAgainstFakes runs the real binary with every API backend pointed at one
// fake server, in an empty home and working directory (no stray .env).
func runAgainstFakes(t *testing.T, script *fake.Script, args ...string) (stdout, stderr string, code int, stateDir string) {
	t.Helper()
	srv := httptest.NewServer(fake.NewAll(script))
	defer srv.Close()
	stateDir = t.TempDir()
	cmd := exec.Command(binary(t), append([]string{"run", "--state-dir", stateDir, "-v"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for k, v := range plantedKeys {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range fake.BaseURLs(srv.URL) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), stateDir
}

// assertNoKeys greps everything a run leaves behind for the planted keys.
func assertNoKeys(t *testing.T, stateDir string, texts ...string) {
	t.Helper()
	check := func(where, s string) {
		for name, k := range plantedKeys {
			if strings.Contains(s, k) || strings.Contains(s, k[:16]) {
				t.Errorf("%s leaks %s", where, name)
			}
		}
	}
	for i, s := range texts {
		check([]string{"stdout", "stderr"}[i%2], s)
	}
	filepath.Walk(stateDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(p)
			check(p, string(data))
		}
		return nil
	})
}

func TestProvidersThroughTheirSDKsReachConsensus(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	out, errs, code, state := runAgainstFakes(t, fake.NewScript(), "--models", providerTeam, "--seed", "1", "--json", "What is 6 * 7?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Status != "finished" || *res.HowChosen != coordination.ChosenConsensus || len(res.Answers) != 4 {
		t.Fatalf("result: %s", out)
	}
	if res.CostUSD == nil || *res.CostUSD <= 0 || !res.BudgetEnforced {
		t.Fatalf("every model is priced, so the cost is known and positive: %v", res.CostUSD)
	}
	for _, a := range res.Agents {
		if a.CostUSD == nil || a.Usage.Input == 0 || a.Usage.Output == 0 {
			t.Fatalf("agent %s has no usage or cost: %+v", a.AgentID, a)
		}
	}
	assertNoKeys(t, state, out, errs)

	// The human rendering prints the cost too.
	out, errs, code, state = runAgainstFakes(t, fake.NewScript(), "--models", providerTeam, "--seed", "1", "What is 6 * 7?")
	if code != 0 || !strings.Contains(out, "cost $") || !strings.Contains(out, "chosen by consensus") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	assertNoKeys(t, state, out, errs)
}

func TestAFailingProviderIsDroppedAndTheOthersAgree(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	script := fake.NewScript()
	script.Always("grok-4", fake.Reply{Kind: fake.ReplyStatus, Status: 500, ErrorMessage: "internal error"})
	out, errs, code, state := runAgainstFakes(t, script, "--models", providerTeam, "--seed", "1", "--json", "What is 6 * 7?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Status != "finished" || *res.HowChosen != coordination.ChosenConsensus || len(res.Answers) != 3 {
		t.Fatalf("the three others agree: %s", out)
	}
	if res.Winner.AgentID == "agent_d" {
		t.Fatal("the failing agent cannot win")
	}
	status, err := exec.Command(binary(t), "status", "--json", res.SessionDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var v coordination.StatusView
	json.Unmarshal(status, &v)
	d := v.Agents[3]
	if d.ID != "agent_d" || d.Status != "dropped" || !strings.Contains(d.LastError, "HTTP 500") {
		t.Fatalf("grok's agent must be dropped with its failure class: %+v", d)
	}
	assertNoKeys(t, state, out, errs, string(status))
}

func TestATypoedModelIsNamedBeforeAnyStepWithTheClosestNames(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	script := fake.NewScript()
	out, errs, code, state := runAgainstFakes(t, script, "--models", "openai/gpt-5-mni,claude/claude-haiku-4-5", "What is 6 * 7?")
	if code != exitBadInput || !strings.Contains(errs, `openai has no model "gpt-5-mni"`) || !strings.Contains(errs, "did you mean openai/gpt-5-mini") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if n := len(script.Calls()); n != 0 {
		t.Errorf("%d model calls were paid for", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "sessions")); len(entries) != 0 {
		t.Errorf("a refused team left %d sessions", len(entries))
	}
	assertNoKeys(t, state, out, errs)
}

func TestARefusedKeyLeavesItsAgentOutAndTheResultSaysSo(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	script := fake.NewScript()
	script.FailModels(fake.ListGemini, fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorType: "api_key_invalid"})
	out, errs, code, state := runAgainstFakes(t, script, "--models", "openai/gpt-5-mini,claude/claude-haiku-4-5,gemini/gemini-2.5-flash", "--seed", "1", "What is 6 * 7?")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"Warning: agent_c (gemini/gemini-2.5-flash) is left out", "Dropped: agent_c (gemini/gemini-2.5-flash) — auth:", "Winner:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "DEGRADED") {
		t.Errorf("two agents answered; not degraded:\n%s", out)
	}
	assertNoKeys(t, state, out, errs)
}

// TestAPIAgentsDeliverFilesThroughTheirSDKs: every API backend's tool call
// carries new_answer's files, and so does a reply that writes the call as
// JSON text (the text fallback); each lands in the agent's snapshot.
func TestAPIAgentsDeliverFilesThroughTheirSDKs(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	script := fake.NewScript()
	page := func(who string) []providers.AnswerFile {
		return []providers.AnswerFile{{Path: "site/index.html", Content: "<h1>" + who + "</h1>"}}
	}
	script.Add("gpt-5-mini", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "openai's site", Files: page("openai")})
	script.Add("claude-haiku-4-5", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "claude's site", Files: page("claude")})
	script.Add("gemini-2.5-flash", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "gemini's site", Files: page("gemini")})
	script.Add("grok-4", fake.Reply{Kind: fake.ReplyText, Content: "Here it is.\n```json\n" +
		`{"tool": "new_answer", "arguments": {"content": "grok's site", "files": [{"path": "site/index.html", "content": "<h1>grok</h1>"}]}}` + "\n```"})
	out, errs, code, state := runAgainstFakes(t, script, "--models", providerTeam, "--seed", "1", "--json", "Build a one-page site")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var res coordination.TeamResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.FilesCount != 1 || res.Files[0].Path != "site/index.html" {
		t.Fatalf("the winner's files: %+v", res.Files)
	}
	for id, who := range map[string]string{"agent_a": "openai", "agent_b": "claude", "agent_c": "gemini", "agent_d": "grok"} {
		data, err := os.ReadFile(filepath.Join(res.SessionDir, "agents", id, "001", "workspace", "site", "index.html"))
		if err != nil || string(data) != "<h1>"+who+"</h1>" {
			t.Errorf("%s (%s) delivered %q, %v", id, who, data, err)
		}
	}
	// Every backend was offered new_answer with files.
	for _, c := range script.Calls() {
		if !strings.Contains(string(c.Body), `files`) {
			t.Errorf("%s's request does not offer files", c.Model)
		}
	}
	assertNoKeys(t, state, out, errs)
}
