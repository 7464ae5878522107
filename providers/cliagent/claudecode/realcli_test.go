package claudecode

// Tests against the real Claude Code CLI, pointed at this project's fake
// Anthropic API (providers/fake) on loopback with a dummy key, telemetry and
// updates off, a temp HOME. They run when the CLI is found: CLAUDE_BIN, or
// the pinned install `make test` puts in .cache/clients (e2e/clients.sh).
// Under CI=true (or MASSGEN_REAL_CLIS=1) a missing CLI fails them.

import (
	"context"
	"encoding/json"
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

type realHarness struct {
	script *fake.Script
	p      *cliagent.Provider
	ws     string
	inside string // the workspace as the CLI sees it
	dir    string // the agents' private directories (Options.Dir)
	home   string // the user's HOME, where their ~/.claude is
	rec    *clitest.Recorder
}

func newReal(t *testing.T, extraEnv ...string) *realHarness {
	return newRealIn(t, cliagent.Plain{}, extraEnv...)
}

func newRealIn(t *testing.T, sb cliagent.Sandbox, extraEnv ...string) *realHarness {
	return newRealServing(t, sb, clitest.Relay(), extraEnv...)
}

// newRealServing is newRealIn with relay as the workflow server's command.
func newRealServing(t *testing.T, sb cliagent.Sandbox, relay []string, extraEnv ...string) *realHarness {
	return newRealWith(t, sb, relay, nil, extraEnv...)
}

// newRealWith is newRealServing with the user's HOME made by setup (their
// ~/.claude, before the provider reads it) and the user's own setup
// loaded (MASSGEN_CLAUDE_CODE_SETUP=user, no --bare) when setup is set.
func newRealWith(t *testing.T, sb cliagent.Sandbox, relay []string, setup func(home string), extraEnv ...string) *realHarness {
	bin := clitest.Binary(t, "../../..", "claude", "CLAUDE_BIN")
	script := fake.NewScript()
	script.Default = func(fake.Call) fake.Reply { return fake.Reply{Kind: fake.ReplyText, Content: "Done."} }
	srv := httptest.NewServer(fake.NewAnthropic(script))
	t.Cleanup(srv.Close)
	home := t.TempDir()
	if setup != nil {
		setup(home)
	}
	env := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-ant-dummy-fake-not-a-key-0000",
		"CLAUDE_CODE_MAX_RETRIES=1",
	}, extraEnv...)
	dir := t.TempDir()
	p, err := cliagent.New(CLI{}, cliagent.Options{
		Model: "claude-opus-4-6", Binary: bin, Env: env, Dir: dir,
		Relay: relay, Slots: semaphore.NewWeighted(2),
		Secrets: []string{"sk-ant-dummy-fake-not-a-key-0000"}, Sandbox: sb,
		UserSetup: setup != nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	inside := ws
	if sb.Confined() {
		inside, _ = sb.Paths(cliagent.Confinement{Workspace: ws})
	}
	return &realHarness{script: script, p: p, ws: ws, inside: inside, dir: dir, home: home, rec: &clitest.Recorder{}}
}

func (h *realHarness) request(tools ...providers.Tool) providers.Request {
	return clitest.Request(h.ws, h.rec, tools...)
}

// bashStep runs step n of the harness's agent: one Bash command (echo
// text), then its answer text; the test fails unless the step answered.
func (h *realHarness) bashStep(t *testing.T, n int, text string) {
	t.Helper()
	cmd, _ := json.Marshal(map[string]string{"command": "echo " + text, "description": "echo"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: cmd},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"` + text + `"}`)},
	)
	req := h.request(clitest.AnswerTool)
	req.StepNumber = n
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	act, _, err := h.p.Step(ctx, req)
	h.calls(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
}

func (h *realHarness) calls(t *testing.T) {
	for i, c := range h.script.Calls() {
		t.Logf("request %d: model %s tools %d", i, c.Model, len(c.Tools))
	}
}

func TestRealClaudeWritesAFileAndAnswersThroughTheWorkflowServer(t *testing.T) {
	writeAndAnswer(t, newReal(t))
}

func TestRealClaudeInTheSandboxWritesAFileAndAnswers(t *testing.T) {
	writeAndAnswer(t, newRealIn(t, clitest.Sandboxed(t)))
}

func writeAndAnswer(t *testing.T, h *realHarness) {
	input, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, "answer.txt"), "old_string": "", "new_string": "391\n"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Edit", Input: input},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"17 * 23 = 391; see answer.txt"}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	act, u, err := h.p.Step(ctx, h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2")))
	h.calls(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || !strings.Contains(string(act.Calls[0].Args), "391") {
		t.Fatalf("action = %+v", act)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("answer.txt: %q %v", b, err)
	}
	if u.Input == 0 || u.Output == 0 || u.CostUSD == nil {
		t.Fatalf("usage = %+v", u)
	}
	t.Logf("usage %+v cost %v, text %q, %d tool records", u, *u.CostUSD, h.rec.Streamed.String(), len(h.rec.Tools))
}

func TestRealClaudeVotesWithinTheEnumAfterARefusal(t *testing.T) {
	h := newRealIn(t, sandboxedOrPlain())
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__vote", Input: json.RawMessage(`{"agent_id":"agent7","reason":"best"}`)},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__vote", Input: json.RawMessage(`{"agent_id":"agent2","reason":"agent2 shows its work"}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Voted."},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	req := h.request(clitest.AnswerTool, clitest.VoteTool("agent1", "agent2"))
	req.Shown = []providers.ShownAnswer{{Alias: "agent1", Label: "agent1.1", Content: "391"}, {Alias: "agent2", Label: "agent2.1", Content: "17*23 = 391"}}
	act, _, err := h.p.Step(ctx, req)
	h.calls(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || !strings.Contains(string(act.Calls[0].Args), `"agent2"`) {
		t.Fatalf("action = %+v", act)
	}
	calls := h.script.Calls()
	if len(calls) < 2 || !strings.Contains(string(calls[1].Body), `must be one of \"agent1\", \"agent2\"`) {
		t.Fatal("the relay's refusal of agent7 did not reach the model as the tool's result")
	}
}

// sandboxedOrPlain is the sandbox where bwrap works, else Plain.
func sandboxedOrPlain() cliagent.Sandbox { return cliagent.DefaultSandbox() }

func TestRealClaudeThatHangsIsKilledAtTheStepTimeout(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the step's run directory, named on every command line of the step
	h := newRealIn(t, sandboxedOrPlain())
	h.script.Always("claude-opus-4-6", fake.Reply{Kind: fake.ReplyStall})
	// The step's deadline passes a few seconds after claude's first call
	// (as a context.WithTimeout's would: done, its cause the deadline), so
	// the hang is the API's. Counted from the Step call, it had to cover
	// claude's start on a loaded machine: 12 s was not enough once in CI's
	// parallel lanes, and a node CLI there once took over 30 s to call.
	const timeout = 3 * time.Second
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	errc := make(chan error, 1)
	go func() { _, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool)); errc <- err }()
	clitest.AwaitFirstCall(t, h.script.Calls, errc)
	time.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	start := time.Now()
	err := <-errc
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the step's deadline", err)
	}
	if d := time.Since(start); d > timeout+6*time.Second {
		t.Fatalf("the step ended %v after claude's first call, its deadline %v after it", d, timeout)
	}
	clitest.AssertNoProcessIn(t, tmp)
}

func TestRealClaudeCancelledLeavesNoProcess(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := newRealIn(t, sandboxedOrPlain())
	h.script.Always("claude-opus-4-6", fake.Reply{Kind: fake.ReplyStall})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool)); errc <- err }()
	clitest.AwaitFirstCall(t, h.script.Calls, errc)
	if len(clitest.ProcessesIn(tmp)) == 0 {
		t.Fatal("no process of the step found while it runs: the check would prove nothing")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	clitest.AssertNoProcessIn(t, tmp)
}

func TestRealClaudeAPIErrorIsAnErrorInItsOwnWords(t *testing.T) {
	h := newRealIn(t, sandboxedOrPlain())
	h.script.Always("claude-opus-4-6", fake.Reply{Kind: fake.ReplyStatus, Status: 500, ErrorMessage: "scripted error 500"})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	_, _, err := h.p.Step(ctx, h.request(clitest.AnswerTool))
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a provider error", err)
	}
	if pe.Class != providers.ClassProvider || pe.Status != 500 || !strings.Contains(pe.Message, "claude failed: API Error: 500") ||
		!strings.Contains(pe.Message, "exit status 1") {
		t.Fatalf("error = %+v", pe)
	}
	if strings.Contains(pe.Message, "sk-ant-dummy-fake-not-a-key-0000") {
		t.Fatal("the key is in the error")
	}
}

func TestRealClaudeThatEndsWithoutACallIsResumedWithWhatWasWrong(t *testing.T) {
	h := newRealIn(t, sandboxedOrPlain())
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyText, Content: "The answer is 391."},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"The answer is 391."}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	req := h.request(clitest.AnswerTool)
	act, _, err := h.p.Step(ctx, req)
	if err != nil || len(act.Calls) != 0 || act.Text != "The answer is 391." {
		t.Fatalf("first attempt: %+v %v", act, err)
	}
	req.Attempt = 1
	req.History = []providers.Turn{{Reply: act, Problem: "You did not call a workflow tool. Finish by calling exactly one of: new_answer."}}
	act, _, err = h.p.Step(ctx, req)
	h.calls(t)
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("the corrective retry: %+v %v", act, err)
	}
	calls := h.script.Calls()
	msgs := anthropicMessages(t, calls[1].Body)
	// The resumed session carries the first run's turn, and the new turn
	// says only what was wrong (plus the text convention as a fallback):
	// the prompt was sent once, in the first run. What Claude Code replays
	// of its own session before the new turn is its business, so only the
	// new turn is held to not repeating the prompt.
	last := msgs[len(msgs)-1]
	if last.role != "user" || !strings.Contains(last.text, "Your step is not done: You did not call a workflow tool.") {
		t.Fatalf("the retry's new turn is not the problem: %+v", last)
	}
	if strings.Contains(last.text, "What is 17 * 23? Write answer.txt") {
		t.Fatalf("a resumed run must not repeat the step's prompt: %s", last.text)
	}
	var carried bool
	for _, m := range msgs[:len(msgs)-1] {
		carried = carried || m.role == "assistant" && strings.Contains(m.text, "The answer is 391.")
	}
	if !carried {
		t.Fatalf("the retry did not resume the session (the first run's reply is not in it): %s", calls[1].Body)
	}
}

type sentTurn struct{ role, text string }

// anthropicMessages reads a Messages API request's turns, each turn's text
// blocks joined.
func anthropicMessages(t *testing.T, body []byte) []sentTurn {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("not a Messages request (%v): %s", err, body)
	}
	out := make([]sentTurn, 0, len(req.Messages))
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				t.Fatalf("a turn's content is neither text nor blocks (%v): %s", err, m.Content)
			}
			var parts []string
			for _, b := range blocks {
				if b.Type == "text" {
					parts = append(parts, b.Text)
				}
			}
			text = strings.Join(parts, "\n")
		}
		out = append(out, sentTurn{role: m.Role, text: text})
	}
	return out
}

// A team's MCP server reaches the real CLI through the workflow server: the
// model calls mcp__workflow__probe__echo, the step runs it through its
// toolbox, and the result comes back to the model.
func TestRealClaudeCallsItsTeamsMCPToolThroughTheWorkflowServer(t *testing.T) {
	h := newRealIn(t, sandboxedOrPlain())
	h.script.Add("claude-opus-4-6", clitest.EchoReplies("mcp__workflow__")...)
	box, req := clitest.WithEcho(h.request(clitest.AnswerTool))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	act, _, err := h.p.Step(ctx, req)
	h.calls(t)
	if err != nil {
		t.Fatal(err)
	}
	clitest.AssertEchoServed(t, box, h.script.Calls(), act, h.rec)
}
