package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// A read-only agent's Codex tries to write outside its workspace and to
// fetch a URL with curl: its PreToolUse hook asks the step's engine, which
// refuses both, the model hears why, nothing is written, and the audit has
// both refusals and the run's settings (--sandbox read-only).
func TestRealCodexReadOnlyIsRefusedAWriteOutsideAndANetworkCommand(t *testing.T) {
	h := newReal(t, clitest.Sandboxed(t))
	outside := filepath.Join(clitest.OutsideDir(t), "escaped.txt")
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: outside, Content: "pwned\n"}}},
		fake.Reply{Kind: fake.ReplyShell, Content: "curl -sS https://example.com/"},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "I may not do either."},
		fake.Reply{Kind: fake.ReplyText, Content: "Submitted."},
	)
	pm := clitest.ReadOnly()
	req := h.request(clitest.AnswerTool)
	req.Permits = pm
	act, _, err := h.step(t, 180*time.Second, req)
	t.Logf("audit:\n%s", pm.Lines())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("the file outside the workspace was written (%v)", err)
	}
	w := pm.AssertRefused(t, "apply_patch", permissions.Write)
	if w.Action.Target != outside {
		t.Errorf("the write's target = %q, want %q", w.Action.Target, outside)
	}
	var shell permissions.Record
	for _, r := range pm.Records() {
		if r.Action.Kind == permissions.Net && r.Action.Target == "example.com" && !r.Outcome.Ran() {
			shell = r
		}
	}
	if shell.Tool == "" {
		t.Fatalf("no refused net(example.com) in the audit")
	}
	heard := 0
	for _, c := range h.script.Calls() {
		if strings.Contains(string(c.Body), "Not run: ") {
			heard++
		}
	}
	if heard < 2 {
		t.Fatalf("the refusals reached the model %d times, want 2", heard)
	}
	sandbox := false
	for _, r := range pm.Records() {
		sandbox = sandbox || strings.Contains(r.Rule, "--sandbox read-only")
		if strings.Contains(r.Tool, "workflow") {
			t.Errorf("the workflow server's own call was put to the engine: %+v", r)
		}
	}
	if !sandbox {
		t.Error("no audit line names the run's read-only sandbox")
	}
}
