package codex

// Tests against the real Codex CLI, pointed at this project's fake
// Responses API (providers/fake, which plays Codex's tool search, its
// apply_patch and exec_command, and the workflow server's tools) on loopback
// with a dummy key: a model provider in the test HOME's config.toml (Codex
// ignores OPENAI_BASE_URL), update checks, plugins and analytics off. They
// run when the CLI is found: CODEX_BIN, or the pinned install `make test`
// puts in .cache/clients (e2e/install-clis.sh). Under CI=true (or
// MASSGEN_REAL_CLIS=1) a missing CLI fails them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "relay-server" {
		v, err := relay.ReadView(os.Args[3])
		if err == nil {
			err = relay.Serve(context.Background(), v, os.Stdin, os.Stdout, "test")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// codexBinary finds the real CLI or skips (fails under CI).
func codexBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CODEX_BIN"); p != "" {
		return p
	}
	root, _ := filepath.Abs("../../..")
	p := filepath.Join(root, ".cache", "clients", "node_modules", ".bin", "codex")
	if _, err := os.Stat(p); err == nil {
		abs, _ := filepath.EvalSymlinks(p)
		return abs
	}
	if os.Getenv("CI") == "true" || os.Getenv("MASSGEN_REAL_CLIS") == "1" {
		t.Fatalf("the real codex CLI is missing (%s): make test installs it (bash e2e/install-clis.sh), or set CODEX_BIN", p)
	}
	t.Skip("the real codex CLI is not installed (make test installs it into .cache/clients; or set CODEX_BIN)")
	return ""
}

// model is a slug from Codex's catalog: with another it loses apply_patch.
const model = "gpt-5.5"

const plantedSecret = "planted-secret-9f8e7d6c5b4a"

type realHarness struct {
	script *fake.Script
	p      *cliagent.Provider
	ws     string
	rec    *recorder
}

type recorder struct {
	text  strings.Builder
	tools []providers.ToolRecord
}

func (r *recorder) Text(d string)                   { r.text.WriteString(d + "\n") }
func (r *recorder) Retry(time.Duration, error)      {}
func (r *recorder) Record(rec providers.ToolRecord) { r.tools = append(r.tools, rec) }

// codexConfig is the user's own config.toml of the tests: the fake as a
// custom model provider, which the agents' runs keep using.
func codexConfig(baseURL string) string {
	return `model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "` + baseURL + `/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false
`
}

func newReal(t *testing.T, sandbox cliagent.Sandbox) *realHarness {
	t.Helper()
	bin := codexBinary(t)
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	self, _ := filepath.Abs(os.Args[0])
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codexConfig(srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"OPENAI_API_KEY=sk-fake-0123456789abcdefghij",
		"MASSGEN_PLANTED_TOKEN=" + plantedSecret, // an unrelated secret of the server's
	}
	p, err := cliagent.New(CLI{}, cliagent.Options{
		Model: model, Binary: bin, Env: env, Dir: t.TempDir(),
		Relay: []string{self, "relay-server"}, Slots: semaphore.NewWeighted(2),
		Secrets: []string{"sk-fake-0123456789abcdefghij", plantedSecret}, Sandbox: sandbox,
		AfterCall: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	return &realHarness{script: script, p: p, ws: ws, rec: &recorder{}}
}

func (h *realHarness) request(tools ...providers.Tool) providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep, System: "You are a member of a team.", Prompt: "What is 17 * 23? Write answer.txt, then submit.",
		Tools: tools, Workspace: h.ws, AgentID: "agent_a", SessionSeed: 1, StepNumber: 1, Watch: h.rec, Record: h.rec,
	}
}

func (h *realHarness) step(t *testing.T, timeout time.Duration, req providers.Request) (providers.Action, providers.Usage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	act, u, err := h.p.Step(ctx, req)
	for i, c := range h.script.Calls() {
		t.Logf("scripted request %d: model %s tools %v enum %v", i, c.Model, c.Tools, c.VoteEnum)
	}
	return act, u, err
}

var answerTool = providers.Tool{Name: providers.ToolNewAnswer, Description: "Submit your answer.",
	Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`)}

func voteTool(enum ...string) providers.Tool {
	e, _ := json.Marshal(enum)
	return providers.Tool{Name: providers.ToolVote, Description: "Vote for the best answer.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":` + string(e) + `},"reason":{"type":"string"}},"required":["agent_id","reason"],"additionalProperties":false}`)}
}

func TestRealCodexWritesAFileAndAnswersThroughTheWorkflowServer(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 391; see answer.txt",
			Usage: &fake.Usage{Input: 1000, CachedInput: 400, Output: 100, Reasoning: 30}},
	)
	act, u, err := h.step(t, 90*time.Second, h.request(answerTool, voteTool("agent1", "agent2")))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || !strings.Contains(string(act.Calls[0].Args), "391") {
		t.Fatalf("action = %+v", act)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("answer.txt: %q %v", b, err)
	}
	if u.Input < 1000 || u.CachedInput < 400 || u.Reasoning < 30 || u.CostUSD == nil || *u.CostUSD <= 0 {
		t.Fatalf("usage = %+v (cached and reasoning tokens from turn.completed, priced as %s)", u, model)
	}
	var kinds []string
	for _, r := range h.rec.tools {
		kinds = append(kinds, r.Kind+":"+r.Name)
	}
	if strings.Join(kinds, " ") != "file_change:add" {
		t.Errorf("tool records %v: want the file change only (the workflow call is the action)", kinds)
	}
	t.Logf("usage %+v cost %v, text %q", u, *u.CostUSD, h.rec.text.String())
}

func TestRealCodexVotesWithTheViewsEnumAndResumesItsThread(t *testing.T) {
	h := newReal(t, nil)
	act, _, err := h.step(t, 90*time.Second, h.request(answerTool))
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("first step: %+v, %v", act, err)
	}
	first := len(h.script.Calls())
	// The second step offers only a vote; the fake's default votes for the
	// first name the workflow server's vote tool offers.
	req := h.request(voteTool("agent2", "agent3"))
	req.StepNumber = 2
	act, _, err = h.step(t, 90*time.Second, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || !strings.Contains(string(act.Calls[0].Args), `"agent2"`) {
		t.Fatalf("action = %+v", act)
	}
	calls := h.script.Calls()
	last := calls[len(calls)-1]
	if strings.Join(last.VoteEnum, ",") != "agent2,agent3" {
		t.Errorf("the workflow server offered enum %v, want the view's", last.VoteEnum)
	}
	// Resumed: the second step's requests carry the first step's turn.
	if n := strings.Count(string(calls[first].Body), `"role":"user"`); n < 2 {
		t.Errorf("the second step's request has %d user messages: codex exec resume did not continue the thread", n)
	}
}

func TestRealCodexAPIFailureIsAnErrorInItsOwnWords(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyStatus, Status: 401})
	_, _, err := h.step(t, 90*time.Second, h.request(answerTool))
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a provider error", err)
	}
	if !strings.HasPrefix(pe.Message, "codex failed: ") || pe.Class != providers.ClassAuth {
		t.Fatalf("class %s message %q", pe.Class, pe.Message)
	}
	if strings.Contains(pe.Message, "sk-fake-0123456789abcdefghij") {
		t.Fatalf("the key is in the message: %q", pe.Message)
	}
	t.Logf("%s: %s", pe.Class, pe.Message)
}

func TestRealCodexHangIsKilledAtTheStepTimeoutAndLeavesNoProcess(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyStall})
	start := time.Now()
	_, _, err := h.step(t, 4*time.Second, h.request(answerTool))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the step's deadline", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the step took %v", d)
	}
	assertNoProcessIn(t, h.ws)
}

func TestRealCodexShellSeesOnlyTheAllowList(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyShell, Content: "env > env.txt"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "listed my environment"},
	)
	act, _, err := h.step(t, 90*time.Second, h.request(answerTool))
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("%+v %v", act, err)
	}
	b, err := os.ReadFile(filepath.Join(h.ws, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), plantedSecret) || strings.Contains(string(b), "MASSGEN_PLANTED_TOKEN") {
		t.Fatalf("an unrelated secret of the server reached codex's shell:\n%s", b)
	}
	if !strings.Contains(string(b), "CODEX_HOME=") || !strings.Contains(string(b), "HOME=") {
		t.Errorf("the shell lacks the CLI's own variables:\n%s", b)
	}
	var cmds int
	for _, r := range h.rec.tools {
		if r.Kind == "command" && strings.Contains(r.Name, "env > env.txt") {
			cmds++
		}
	}
	if cmds != 1 {
		t.Errorf("tool records %+v: want the command", h.rec.tools)
	}
}

// assertNoProcessIn fails if a process still works in dir (the CLI, its
// MCP server, a command it ran): a killed step leaves none.
func assertNoProcessIn(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesIn(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the step: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesIn(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie awaiting its reaper runs nothing
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// sandboxed returns the bwrap sandbox, skipping where it cannot run (CI
// installs bubblewrap, so there it must).
func sandboxed(t *testing.T) cliagent.Sandbox {
	t.Helper()
	sb := cliagent.DefaultSandbox()
	if !sb.Confined() {
		if os.Getenv("CI") == "true" || os.Getenv("MASSGEN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("bwrap cannot run here: %s", cliagent.SandboxStatus())
		}
		t.Skip(cliagent.SandboxStatus())
	}
	return sb
}

func TestRealCodexInsideTheSandboxNestsItsOwn(t *testing.T) {
	h := newReal(t, sandboxed(t))
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}},
		// Codex's own sandbox (bwrap and seccomp) runs inside ours: the
		// command writes in the workspace; outside it, nothing is writable.
		fake.Reply{Kind: fake.ReplyShell, Content: "echo nested > shell.txt; touch /home/escape.txt 2>err.txt; echo $? >> shell.txt"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "391, in answer.txt"},
	)
	act, _, err := h.step(t, 90*time.Second, h.request(answerTool))
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("%+v %v", act, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("apply_patch inside the sandbox: %q %v", b, err)
	}
	b, err := os.ReadFile(filepath.Join(h.ws, "shell.txt"))
	if err != nil || !strings.HasPrefix(string(b), "nested\n") || strings.HasSuffix(string(b), "\n0\n") {
		errs, _ := os.ReadFile(filepath.Join(h.ws, "err.txt"))
		t.Fatalf("the nested shell: %q %v (stderr %q): want it to write the workspace and fail outside", b, err, errs)
	}
	for _, r := range h.rec.tools {
		t.Logf("record %s %s error=%v", r.Kind, r.Name, r.IsError)
	}
}
