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
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

func TestMain(m *testing.M) {
	clitest.RunRelay()
	os.Exit(m.Run())
}

// model is a slug from Codex's catalog: with another it loses apply_patch.
const model = "gpt-5.5"

const plantedSecret = "dummy-planted-secret-not-a-key"

type realHarness struct {
	script *fake.Script
	p      *cliagent.Provider
	ws     string
	home   string // the user's HOME, holding their .codex
	dir    string // the agents' private directories (Options.Dir)
	rec    *clitest.Recorder
}

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
	return newRealRelayed(t, sandbox, clitest.Relay())
}

// newRealRelayed is newReal with the workflow server run by relay.
func newRealRelayed(t *testing.T, sandbox cliagent.Sandbox, relay []string) *realHarness {
	t.Helper()
	bin := clitest.Binary(t, "../../..", "codex", "CODEX_BIN")
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codexConfig(srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"OPENAI_API_KEY=sk-dummy-fake-not-a-key-0000",
		"MASSGEN_PLANTED_TOKEN=" + plantedSecret, // an unrelated secret of the server's
	}
	p, err := cliagent.New(CLI{}, cliagent.Options{
		Model: model, Binary: bin, Env: env, Dir: dir,
		Relay: relay, Slots: semaphore.NewWeighted(2),
		Secrets: []string{"sk-dummy-fake-not-a-key-0000", plantedSecret}, Sandbox: sandbox,
		AfterCall: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	return &realHarness{script: script, p: p, ws: ws, home: home, dir: dir, rec: &clitest.Recorder{}}
}

func (h *realHarness) request(tools ...providers.Tool) providers.Request {
	return clitest.Request(h.ws, h.rec, tools...)
}

func (h *realHarness) step(t *testing.T, timeout time.Duration, req providers.Request) (providers.Action, providers.Usage, error) {
	t.Helper()
	return clitest.Step(t, h.p, h.script.Calls, timeout, req)
}

func TestRealCodexWritesAFileAndAnswersThroughTheWorkflowServer(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "17 * 23 = 391; see answer.txt",
			Usage: &fake.Usage{Input: 1000, CachedInput: 400, Output: 100, Reasoning: 30}},
	)
	act, u, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2")))
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
	kinds := h.rec.Kinds()
	if strings.Join(kinds, " ") != "file_change:add" {
		t.Errorf("tool records %v: want the file change only (the workflow call is the action)", kinds)
	}
	t.Logf("usage %+v cost %v, text %q", u, *u.CostUSD, h.rec.Streamed.String())
}

func TestRealCodexVotesWithTheViewsEnumAndResumesItsThread(t *testing.T) {
	h := newReal(t, nil)
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("first step: %+v, %v", act, err)
	}
	first := len(h.script.Calls())
	// The second step offers only a vote; the fake's default votes for the
	// first name the workflow server's vote tool offers.
	req := h.request(clitest.VoteTool("agent2", "agent3"))
	req.StepNumber = 2
	act, _, err = h.step(t, 120*time.Second, req)
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
	act, u, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	var pe *providers.Error
	if !errors.As(err, &pe) {
		// Seen once in CI under load (11.8 s, no request reached the fake):
		// what codex answered instead says why.
		t.Fatalf("err = %v, want a provider error; codex answered %+v (usage %+v) after %d requests to the fake",
			err, act, u, len(h.script.Calls()))
	}
	if !strings.HasPrefix(pe.Message, "codex failed: ") || pe.Class != providers.ClassAuth {
		t.Fatalf("class %s message %q", pe.Class, pe.Message)
	}
	if strings.Contains(pe.Message, "sk-dummy-fake-not-a-key-0000") {
		t.Fatalf("the key is in the message: %q", pe.Message)
	}
	t.Logf("%s: %s", pe.Class, pe.Message)
}

func TestRealCodexHangIsKilledAtTheStepTimeoutAndLeavesNoProcess(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyStall})
	start := time.Now()
	_, _, err := h.step(t, 4*time.Second, h.request(clitest.AnswerTool))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the step's deadline", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the step took %v", d)
	}
	clitest.AssertNoProcessIn(t, h.ws)
}

func TestRealCodexShellSeesOnlyTheAllowList(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyShell, Content: "env > env.txt"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "listed my environment"},
	)
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
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
	for _, r := range h.rec.Tools {
		if r.Kind == "command" && strings.Contains(r.Name, "env > env.txt") {
			cmds++
		}
	}
	if cmds != 1 {
		t.Errorf("tool records %+v: want the command", h.rec.Tools)
	}
}

func TestRealCodexInsideTheSandboxNestsItsOwn(t *testing.T) {
	h := newReal(t, clitest.Sandboxed(t))
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}},
		// Codex's own sandbox (bwrap and seccomp) runs inside ours: the
		// command writes in the workspace; outside it, nothing is writable.
		fake.Reply{Kind: fake.ReplyShell, Content: "echo nested > shell.txt; touch /home/escape.txt 2>err.txt; echo $? >> shell.txt"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "391, in answer.txt"},
	)
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
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
	for _, r := range h.rec.Tools {
		t.Logf("record %s %s error=%v", r.Kind, r.Name, r.IsError)
	}
}

// A team's MCP server reaches the real CLI through the workflow server: the
// model calls the workflow server's probe__echo, the step runs it through
// its toolbox, and the result comes back to the model.
func TestRealCodexCallsItsTeamsMCPToolThroughTheWorkflowServer(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model, clitest.EchoReplies("mcp__workflow__")...)
	box, req := clitest.WithEcho(h.request(clitest.AnswerTool))
	act, _, err := h.step(t, 120*time.Second, req)
	if err != nil {
		t.Fatal(err)
	}
	clitest.AssertEchoServed(t, box, h.script.Calls(), act, h.rec)
}

// The real Codex's turn.completed reports its thread's running total, which
// a resumed thread starts from the rollout's: the resumed step is charged
// its own model call, about as much as the first step's one call (the same
// prompt and history), not the first step's again on top (Codex 0.171.0
// before the fix: 22,105 in / 152 out, then 44,249 / 204).
func TestRealCodexResumedStepIsChargedOnlyItsOwnUsage(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model,
		// A step ends at its workflow call: one model call each here.
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "4"},
		fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "right"},
	)
	_, first, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil {
		t.Fatal(err)
	}
	req := h.request(clitest.VoteTool("agent2", "agent3"))
	req.StepNumber = 2
	act, second, err := h.step(t, 120*time.Second, req)
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote {
		t.Fatalf("second step: %+v, %v", act, err)
	}
	t.Logf("first step %d in / %d out, second %d / %d", first.Input, first.Output, second.Input, second.Output)
	if first.Input == 0 || second.Input == 0 {
		t.Fatalf("a step reported no usage: %+v, %+v", first, second)
	}
	if second.Input >= first.Input*3/2 {
		t.Errorf("the resumed step was charged %d in / %d out after a first step of %d / %d: the first step's usage again on top of its own", second.Input, second.Output, first.Input, first.Output)
	}
}
