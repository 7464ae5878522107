package geminicli

// Tests against the real Gemini CLI, pointed at this project's fake Gemini
// API (providers/fake, which plays the CLI's write_file and the workflow
// server's mcp_workflow_* tools) on loopback with a dummy key
// (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY; the test HOME's settings select
// API-key auth, as a user's would), telemetry and updates off. They run when
// the CLI is found: GEMINI_BIN, or the pinned install `make test` puts in
// .cache/clients (e2e/install-clis.sh). Under CI=true (or
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

const model = "gemini-2.5-pro"

type realHarness struct {
	script    *fake.Script
	p         *cliagent.Provider
	ws        string
	home, dir string // the server's HOME, the agents' directory
	rec       *clitest.Recorder
}

func newReal(t *testing.T, sandbox cliagent.Sandbox) *realHarness {
	t.Helper()
	return newRealRelayed(t, sandbox, clitest.Relay())
}

// newRealRelayed is newReal with the workflow server run by relay.
func newRealRelayed(t *testing.T, sandbox cliagent.Sandbox, relay []string) *realHarness {
	t.Helper()
	bin := clitest.Binary(t, "../../..", "gemini", "GEMINI_BIN")
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(script))
	t.Cleanup(srv.Close)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	user := `{"security": {"auth": {"selectedType": "gemini-api-key"}}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"GEMINI_API_KEY=dummy-gemini-key-not-a-key", "GOOGLE_GEMINI_BASE_URL=" + srv.URL,
	}
	dir := t.TempDir()
	p, err := cliagent.New(CLI{}, cliagent.Options{
		Model: model, Binary: bin, Env: env, Dir: dir,
		Relay: relay, Slots: semaphore.NewWeighted(2),
		Secrets: []string{"dummy-gemini-key-not-a-key"}, Sandbox: sandbox, AfterCall: 20 * time.Second,
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

func TestRealGeminiWritesAFileAndAnswersThroughTheWorkflowServer(t *testing.T) {
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
		t.Fatalf("usage = %+v (cached and thought tokens from the result's stats, priced as %s)", u, model)
	}
	kinds := h.rec.Kinds()
	if strings.Join(kinds, " ") != "file_change:write_file" {
		t.Errorf("tool records %v: want the file write only (the workflow call is the action)", kinds)
	}
	if entries, _ := os.ReadDir(h.ws); len(entries) != 1 {
		t.Errorf("the workspace holds %d entries: no generated config may land there", len(entries))
	}
	t.Logf("usage %+v cost %v, text %q", u, *u.CostUSD, h.rec.Streamed.String())
}

func TestRealGeminiVotesWithTheViewsEnumInAFreshSession(t *testing.T) {
	h := newReal(t, nil)
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("first step: %+v, %v", act, err)
	}
	first := len(h.script.Calls())
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
	if last := calls[len(calls)-1]; strings.Join(last.VoteEnum, ",") != "agent2,agent3" {
		t.Errorf("the workflow server offered enum %v, want the view's", last.VoteEnum)
	}
	// Not resumed (see Parser.Outcome): the second step starts afresh, in
	// one run, with the whole prompt.
	if len(calls) != first+1 || strings.Contains(string(calls[first].Body), "mcp_workflow_new_answer") {
		t.Errorf("the second step made %d requests, the first carrying the first step's turn: it resumed", len(calls)-first)
	}
}

func TestRealGeminiAPIFailureIsAnErrorInItsOwnWords(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyStatus, Status: 500, ErrorMessage: "scripted error 500"})
	_, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a provider error", err)
	}
	if !strings.HasPrefix(pe.Message, "gemini failed: ") || !strings.Contains(pe.Message, "scripted error 500") ||
		pe.Class != providers.ClassProvider || pe.Status != 500 {
		t.Fatalf("class %s status %d message %q", pe.Class, pe.Status, pe.Message)
	}
	t.Logf("%s: %s", pe.Class, pe.Message)
}

func TestRealGeminiHangIsKilledAtTheStepTimeoutAndLeavesNoProcess(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyStall})
	start := time.Now()
	_, _, err := h.step(t, 6*time.Second, h.request(clitest.AnswerTool))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the step's deadline", err)
	}
	if d := time.Since(start); d > 12*time.Second {
		t.Fatalf("the step took %v", d)
	}
	clitest.AssertNoProcessIn(t, h.ws)
}

func TestRealGeminiCancelLeavesNoProcess(t *testing.T) {
	h := newReal(t, nil)
	h.script.Always(model, fake.Reply{Kind: fake.ReplyStall})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool)); errc <- err }()
	clitest.AwaitFirstCall(t, h.script.Calls, errc)
	if len(clitest.ProcessesIn(h.ws)) == 0 {
		t.Fatal("no process works in the workspace while the CLI runs: the check below would prove nothing")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	clitest.AssertNoProcessIn(t, h.ws)
}

func TestRealGeminiInTheSandboxWritesRunsItsShellAndAnswers(t *testing.T) {
	h := newReal(t, clitest.Sandboxed(t))
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "answer.txt", Content: "391\n"}}},
		// yolo inside the sandbox: the shell runs, confined.
		fake.Reply{Kind: fake.ReplyShell, Content: "echo confined > shell.txt; touch /home/escape.txt 2>/dev/null; echo $? >> shell.txt"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "391, in answer.txt"},
	)
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("%+v %v", act, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("write_file inside the sandbox: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "shell.txt")); err != nil || !strings.HasPrefix(string(b), "confined\n") || strings.HasSuffix(string(b), "\n0\n") {
		t.Fatalf("the shell: %q %v: want it to write the workspace and fail outside", b, err)
	}
}

// A team's MCP server reaches the real CLI through the workflow server: the
// model calls mcp_workflow_probe__echo, the step runs it through its
// toolbox, and the result comes back to the model.
func TestRealGeminiCallsItsTeamsMCPToolThroughTheWorkflowServer(t *testing.T) {
	h := newReal(t, nil)
	h.script.Add(model, clitest.EchoReplies("mcp_workflow_")...)
	box, req := clitest.WithEcho(h.request(clitest.AnswerTool))
	act, _, err := h.step(t, 120*time.Second, req)
	if err != nil {
		t.Fatal(err)
	}
	clitest.AssertEchoServed(t, box, h.script.Calls(), act, h.rec)
}
