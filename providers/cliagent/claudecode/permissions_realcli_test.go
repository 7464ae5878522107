package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A read-only agent's Claude Code tries to write outside its workspace and
// to fetch a URL with curl: its prompt tool asks the step's engine, which
// refuses both, the model hears why, and the audit has both refusals and
// the run's settings.
func TestRealClaudeReadOnlyIsRefusedAWriteOutsideAndANetworkCommand(t *testing.T) {
	h := newRealIn(t, clitest.Sandboxed(t))
	outside := filepath.Join(clitest.OutsideDir(t), "escaped.txt")
	edit, _ := json.Marshal(map[string]string{"file_path": outside, "old_string": "", "new_string": "pwned\n"})
	curl, _ := json.Marshal(map[string]string{"command": "curl -sS https://example.com/", "description": "fetch"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Edit", Input: edit},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: curl},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"I may not do either."}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	pm := clitest.ReadOnly()
	act, err := stepAudited(t, h, pm)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("the file outside the workspace was written (%v)", err)
	}
	w := pm.AssertRefused(t, "Edit", permissions.Write)
	if w.Action.Target != outside {
		t.Errorf("the write's target = %q, want %q", w.Action.Target, outside)
	}
	n := pm.AssertRefused(t, "Bash", permissions.Net)
	if n.Action.Target != "example.com" {
		t.Errorf("the network action = %s, want net(example.com)", n.Action)
	}
	heard := 0
	for _, c := range h.script.Calls() {
		if strings.Contains(string(c.Body), "Not run: ") {
			heard++
		}
	}
	if heard == 0 {
		t.Fatal("the refusal never reached the model")
	}
}

// Outside the sandbox the shell is off whatever the rules say: the CLI
// refuses curl itself, and the audit's line of the run's settings says so.
func TestRealClaudeUnsandboxedReadOnlyHasNoShellAndTheAuditSaysSo(t *testing.T) {
	h := newReal(t)
	curl, _ := json.Marshal(map[string]string{"command": "curl -sS https://example.com/", "description": "fetch"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Bash", Input: curl},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"no shell"}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	pm := clitest.ReadOnly()
	act, err := stepAudited(t, h, pm)
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("action = %+v, %v", act, err)
	}
	var shell *permissions.Record
	for _, r := range pm.Records() {
		if r.Action.Kind == permissions.Exec && strings.Contains(r.Rule, "--disallowedTools Bash") && r.Outcome == permissions.Denied {
			shell = &r
		}
	}
	if shell == nil {
		t.Fatal("no audit line says the shell is off")
	}
	calls := h.script.Calls()
	if len(calls) < 2 || !strings.Contains(string(calls[1].Body), "Bash") || strings.Contains(string(calls[1].Body), "Example Domain") {
		t.Fatal("curl ran, or its refusal never reached the model")
	}
}

// Claude Code reads its workspace without asking: each such call is noted
// in the audit (the rules' verdict, allowed, not asked), while the edit it
// asked about is there once, as the prompt tool's decision. Every call the
// stream reports is then in the audit once, as a step taken over counts
// them.
func TestRealClaudesUnaskedReadsAreInTheAuditOnceAndItsAskedEditNotTwice(t *testing.T) {
	h := newReal(t)
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("17 * 23\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, "notes.txt")})
	edit, _ := json.Marshal(map[string]string{"file_path": filepath.Join(h.inside, "answer.txt"), "old_string": "", "new_string": "391\n"})
	h.script.Add("claude-opus-4-6",
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Read", Input: read},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Edit", Input: edit},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "Read", Input: read},
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "mcp__workflow__new_answer", Input: json.RawMessage(`{"content":"391; see answer.txt"}`)},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	pm := &clitest.Permits{}
	act, err := stepAudited(t, h, pm)
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v, %v", act, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("answer.txt = %q, %v", b, err)
	}
	var reads, edits, calls int
	for _, r := range pm.Records() {
		if !r.IsCall() {
			continue
		}
		calls++
		switch {
		case r.Tool == "Read" && r.Action.String() == "read(notes.txt)" && r.Outcome == permissions.Allowed && r.By == cliagent.Unasked:
			reads++
		case r.Tool == "Edit" && r.Action.Kind == permissions.Write && r.By == "":
			edits++
		}
	}
	if reads != 2 || edits != 1 || calls != 3 {
		t.Fatalf("the audit has %d calls: %d unasked reads of notes.txt, %d asked edits; want 3: 2 and 1", calls, reads, edits)
	}
	if got := len(h.rec.Tools); got != calls {
		t.Errorf("the stream reported %d tool calls, the audit %d", got, calls)
	}
}

// stepAudited runs h's scripted step with pm as its permission engine and
// logs the requests and the audit.
func stepAudited(t *testing.T, h *realHarness, pm *clitest.Permits) (providers.Action, error) {
	t.Helper()
	req := h.request(clitest.AnswerTool)
	req.Permits = pm
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	act, _, err := h.p.Step(ctx, req)
	h.calls(t)
	t.Logf("audit:\n%s", pm.Lines())
	return act, err
}
