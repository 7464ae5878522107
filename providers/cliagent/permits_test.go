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
	"github.com/massgen-go/massgen-mcp/providers"
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
	w.gate = newGate(context.Background(), echoGate{}, pm, "/workspace", func(s string) string { return s })
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

// idGate is echoGate whose questions name the call by the id its stream
// gives it ({"tool","path","id"}), as Claude Code's prompt does.
type idGate struct{ echoGate }

func (idGate) CallID(p json.RawMessage) string {
	var q struct{ ID string }
	_ = json.Unmarshal(p, &q)
	return q.ID
}

func (idGate) Asked(rec providers.ToolRecord) json.RawMessage {
	var in struct{ Path string }
	_ = json.Unmarshal(rec.Arguments, &in)
	out, _ := json.Marshal(map[string]string{"tool": rec.Name, "path": in.Path, "id": rec.CallID})
	return out
}

// notingPermits keeps what is noted, beside recordingPermits' checks.
type notingPermits struct {
	recordingPermits
	noted []permissions.Record
}

func (p *notingPermits) Note(r permissions.Record) { p.noted = append(p.noted, r) }

// A call the stream reports that the CLI asked about was decided and
// audited then; one it ran without asking is noted once, with the rules'
// verdict on it and that it ran; after a question that named no call, none
// is noted (one both decided and noted would count twice after a
// takeover); a CLI whose questions name no calls notes nothing.
func TestACallTheCLIRanUnaskedIsNotedOnceAndAnAskedOneNotAgain(t *testing.T) {
	pm := &notingPermits{recordingPermits: recordingPermits{rules: permissions.Rules{Role: permissions.ReadOnly}}}
	g := newGate(context.Background(), idGate{}, pm, "/workspace", func(s string) string { return s })
	stream := func(id, path string) providers.ToolRecord {
		args, _ := json.Marshal(map[string]string{"path": path})
		return providers.ToolRecord{Kind: "tool", Name: "write", Arguments: args, CallID: id}
	}
	if v := g.answer(relay.Call{Arguments: json.RawMessage(`{"tool":"write","path":"/workspace/a.txt","id":"t1"}`)}); !strings.HasPrefix(v.Message, "no: ") {
		t.Fatalf("the asked call: %+v", v)
	}
	g.noteUnasked(stream("t1", "/workspace/a.txt"))
	g.noteUnasked(stream("t2", "/workspace/b.txt"))
	g.noteUnasked(stream("", "/workspace/c.txt")) // a stream that names no id
	if len(pm.checked) != 1 || len(pm.noted) != 1 {
		t.Fatalf("checked %q, noted %+v; want the asked call checked and the unasked one noted, once each", pm.checked, pm.noted)
	}
	n := pm.noted[0]
	if n.Tool != "write" || n.Action.String() != "write(b.txt)" || n.Verdict != permissions.Deny || n.Outcome != permissions.Allowed || n.By != Unasked || !n.IsCall() {
		t.Errorf("the unasked call's line: %+v; want write(b.txt), the rules' deny, allowed (it ran) by %q", n, Unasked)
	}
	// One its stream reported failed may not have run (Claude Code
	// refuses an edit whose input it finds wrong before it would ask):
	// noted failed, not shown as one that ran against the rules.
	failed := stream("t6", "/workspace/c.txt")
	failed.IsError = true
	g.noteUnasked(failed)
	if len(pm.noted) != 2 {
		t.Fatalf("noted %+v; want the failed call noted too", pm.noted)
	}
	if f := pm.noted[1]; f.Outcome != permissions.Failed || f.By != UnaskedFailed || f.Outcome.Ran() || f.Notable() || !f.IsCall() {
		t.Errorf("the failed unasked call's line: %+v; want outcome failed by %q, not notable, a call", f, UnaskedFailed)
	}
	g.answer(relay.Call{Arguments: json.RawMessage(`{"tool":"write","path":"/workspace/d.txt"}`)})
	g.noteUnasked(stream("t3", "/workspace/e.txt"))
	if len(pm.noted) != 2 {
		t.Errorf("after a question that named no call, %d lines noted; want none more", len(pm.noted)-2)
	}
	plain := &notingPermits{}
	pg := newGate(context.Background(), echoGate{}, plain, "/workspace", func(s string) string { return s })
	pg.noteUnasked(stream("t4", "/workspace/f.txt"))
	var none *gate
	none.noteUnasked(stream("t5", "/workspace/g.txt"))
	if len(plain.noted) != 0 {
		t.Errorf("a CLI whose questions name no calls noted %+v", plain.noted)
	}
}
