package cliagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

func TestACLIsToolCallsAreClassifiedAsTheEngineNamesActions(t *testing.T) {
	ws := "/workspace"
	cases := []struct {
		kind   ToolKind
		target string
		want   string
	}{
		{KindWrite, "/workspace/src/a.go", "write(src/a.go)"},
		{KindWrite, "/etc/passwd", "write(/etc/passwd)"},
		{KindRead, "", "read(.)"},
		{KindRead, "/workspace", "read(.)"},
		{KindFetch, "https://user@Example.COM:8443/x?y", "net(example.com)"},
		{KindFetch, "example.org", "net(example.org)"},
		{KindSearch, "", "net(" + permissions.WebSearch + ")"},
		{KindOther, "fs/read", "mcp(fs/read)"},
		{KindShell, "curl -sS https://example.com/", "exec(curl -sS https://example.com/) net(example.com)"},
	}
	for _, c := range cases {
		var got []string
		for _, a := range ActionsFor(c.kind, c.target, ws) {
			got = append(got, a.String())
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%d %q: %v, want %s", c.kind, c.target, got, c.want)
		}
	}
}

func TestShellLineQuotesEveryWord(t *testing.T) {
	got := ShellLine([]string{"/opt/my bin/massgen", "it's", "--hook"})
	if got != `'/opt/my bin/massgen' 'it'\''s' '--hook'` {
		t.Fatalf("%s", got)
	}
}

// echoGate is a CLI wire where the question is {"tool","path"} and the
// answer is "yes" or "no: why".
type echoGate struct{}

func (echoGate) Question(p json.RawMessage, ws string) (string, []permissions.Action, error) {
	var q struct{ Tool, Path string }
	if err := json.Unmarshal(p, &q); err != nil || q.Tool == "" {
		return "", nil, errors.New("no tool")
	}
	if q.Tool == "new_answer" {
		return q.Tool, nil, nil
	}
	return q.Tool, ActionsFor(KindWrite, q.Path, ws), nil
}

func (echoGate) Answer(_ json.RawMessage, ran bool, why string) string {
	if ran {
		return "yes"
	}
	return "no: " + why
}

func (echoGate) UsesPromptTool() bool                          { return false }
func (echoGate) Coarse(Permissions, bool) []permissions.Record { return nil }

type recordingPermits struct {
	rules   permissions.Rules
	checked []string
}

func (p *recordingPermits) Rules() permissions.Rules { return p.rules }
func (p *recordingPermits) Note(permissions.Record)  {}
func (p *recordingPermits) Check(_ context.Context, tool string, acts []permissions.Action) (bool, string) {
	d := permissions.Decide(p.rules, acts...)
	p.checked = append(p.checked, tool+" "+d.Action.String()+" "+string(d.Verdict))
	return d.Verdict == permissions.Allow, d.Rule
}

// A hook's question travels the step's socket to the gate and its answer,
// in the CLI's wire, comes back; the workflow server's own calls go on
// unasked; a question the CLI's wire cannot read, or a step that is gone,
// is refused.
func TestAHooksQuestionIsDecidedByTheStepAndFailsClosed(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	w, err := listenWorkflow(base, testTools(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	pm := &recordingPermits{rules: permissions.Rules{Role: permissions.ReadOnly}}
	w.gate = &gate{ctx: context.Background(), cli: echoGate{}, permits: pm, workspace: "/workspace", mask: func(s string) string { return s }}
	v := relay.View{Socket: w.socket, Tools: testTools()}
	hook := func(in string) (string, error) {
		var out bytes.Buffer
		err := relay.Hook(context.Background(), v, strings.NewReader(in), &out)
		return out.String(), err
	}
	if out, err := hook(`{"tool":"write","path":"/workspace/a.txt"}`); err != nil || !strings.HasPrefix(out, "no: role read-only") {
		t.Errorf("a read-only write: %q %v", out, err)
	}
	if out, err := hook(`{"tool":"new_answer"}`); err != nil || out != "yes" {
		t.Errorf("the workflow server's call: %q %v", out, err)
	}
	if !slices.Equal(pm.checked, []string{"write write(a.txt) deny"}) {
		t.Errorf("the engine was asked %q", pm.checked)
	}
	if _, err := hook(`{"path":"x"}`); !errors.Is(err, relay.ErrRefused) {
		t.Errorf("an unreadable question: %v, want refused", err)
	}
	if _, err := hook(`not json`); !errors.Is(err, relay.ErrRefused) {
		t.Errorf("a question that is not JSON: %v, want refused", err)
	}
	w.close()
	if _, err := hook(`{"tool":"write","path":"a.txt"}`); !errors.Is(err, relay.ErrRefused) {
		t.Errorf("a step that is gone: %v, want refused", err)
	}
}
