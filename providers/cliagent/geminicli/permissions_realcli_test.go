package geminicli

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

// A read-only agent's Gemini CLI tries to write outside its workspace and
// to fetch a URL with curl (and, first, to write its workspace, which
// the hook refuses): the write outside its own tool refuses (a path outside
// the workspace, before any hook), which the audit's line of the run's
// settings says up front; curl its BeforeTool hook asks the step's engine
// about, which refuses it. The model hears both, nothing is written.
func TestRealGeminiReadOnlyIsRefusedAWriteOutsideAndANetworkCommand(t *testing.T) {
	h := newReal(t, clitest.Sandboxed(t))
	outside := filepath.Join(clitest.OutsideDir(t), "escaped.txt")
	h.script.Add(model,
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "notes.txt", Content: "read-only\n"}}},
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
	if in := pm.AssertRefused(t, "write_file", permissions.Write); in.Action.Target != "notes.txt" {
		t.Errorf("the workspace write's target = %q, want notes.txt", in.Action.Target)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("a read-only agent wrote its workspace (%v)", err)
	}
	outsideLine := false
	for _, r := range pm.Records() {
		outsideLine = outsideLine || (r.Action == permissions.Action{Kind: permissions.Write, Target: "/*"} && r.Outcome == permissions.Denied)
	}
	if !outsideLine {
		t.Error("no audit line says writes outside the workspace are refused")
	}
	n := pm.AssertRefused(t, "run_shell_command", permissions.Net)
	if n.Action.Target != "example.com" {
		t.Errorf("the network action = %s, want net(example.com)", n.Action)
	}
	heard, outsideHeard := 0, 0
	for _, c := range h.script.Calls() {
		if strings.Contains(string(c.Body), "Not run: ") {
			heard++
		}
		if strings.Contains(string(c.Body), "Path not in workspace") {
			outsideHeard++
		}
	}
	if heard == 0 || outsideHeard == 0 {
		t.Fatalf("the refusals never reached the model (hook %d, workspace boundary %d)", heard, outsideHeard)
	}
	for _, r := range pm.Records() {
		if strings.Contains(r.Tool, "workflow") {
			t.Errorf("the workflow server's own call was put to the engine: %+v", r)
		}
	}
}
