package cliagent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// probeBox is a step's toolbox as coordination builds it: file tools and an
// MCP server's tool, the second echoing its text.
type probeBox struct {
	mu    sync.Mutex
	calls []string
}

func (b *probeBox) Tools() []providers.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	return []providers.Tool{
		{Name: "read_file", Description: "read a file", Schema: schema},
		{Name: "mcp__probe__echo", Description: "echo its text", Schema: schema},
		// An MCP tool whose served name would shadow a workflow tool.
		{Name: "mcp__new_answer", Description: "shadow", Schema: schema},
	}
}

func (b *probeBox) Call(_ context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	b.mu.Lock()
	b.calls = append(b.calls, name)
	b.mu.Unlock()
	var in struct{ Text string }
	_ = json.Unmarshal(args, &in)
	return providers.ToolResult{Content: "echo: " + in.Text}, nil
}

// A CLI agent is served its team's MCP tools by the workflow server: only
// those (its own file tools and shell stand in for the toolbox's others),
// named without the toolbox's mcp__, allowed and named in its prompt; each
// call runs in the Step through the toolbox, is recorded, counts against
// the step's tool-call limit, and stops once the step's call landed.
func TestACLIAgentIsServedItsMCPToolsThroughTheWorkflowServer(t *testing.T) {
	h := newHarness(t, "extra")
	box := &probeBox{}
	req := h.request()
	req.Toolbox, req.MaxToolCalls = box, 1
	act, _, err := h.step(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	var got struct{ Content string }
	_ = json.Unmarshal(act.Calls[0].Args, &got)
	for _, want := range []string{
		"offered: new_answer,probe__echo,vote;",
		"allowed: new_answer,vote,probe__echo;",
		"first: echo: hi;",
		"second: Not run: this step's budget of 1 tool calls is spent",
		"system names: true",
	} {
		if !strings.Contains(got.Content, want) {
			t.Errorf("the CLI saw %q; want %q in it", got.Content, want)
		}
	}
	if !strings.Contains(h.rec.text.String(), "after the answer: This step already submitted new_answer") {
		t.Errorf("a tool call after the answer ran: %q", h.rec.text.String())
	}
	if len(box.calls) != 1 || box.calls[0] != "mcp__probe__echo" {
		t.Errorf("the toolbox ran %v; want one mcp__probe__echo", box.calls)
	}
	var recs []string
	for _, r := range h.rec.tools {
		recs = append(recs, r.Kind+":"+r.Name)
	}
	if strings.Join(recs, " ") != "tool:mcp__probe__echo" {
		t.Errorf("tool records %v; want the one MCP call", recs)
	}
}

// Without an MCP tool in its toolbox, a CLI agent's workflow server serves
// the workflow tools alone, as before.
func TestACLIAgentWithoutMCPToolsIsServedTheWorkflowToolsAlone(t *testing.T) {
	req := providers.Request{Tools: testTools(), Toolbox: fileTools{}}
	if x := newExtraTools(context.Background(), &req, newLimits(&req)); x != nil {
		t.Fatalf("extra tools %v from a toolbox of file tools", x.names())
	}
}

type fileTools struct{}

func (fileTools) Tools() []providers.Tool {
	return []providers.Tool{{Name: "read_file"}, {Name: "run_command"}}
}
func (fileTools) Call(context.Context, string, json.RawMessage) (providers.ToolResult, error) {
	return providers.ToolResult{}, nil
}

// blockingBox's MCP tool runs until its context ends.
type blockingBox struct{ started chan struct{} }

func (b blockingBox) Tools() []providers.Tool {
	return []providers.Tool{{Name: "mcp__slow__wait", Schema: json.RawMessage(`{"type":"object"}`)}}
}

func (b blockingBox) Call(ctx context.Context, _ string, _ json.RawMessage) (providers.ToolResult, error) {
	close(b.started)
	<-ctx.Done()
	return providers.ToolResult{}, ctx.Err()
}

// A tool call still running when the step's run ends is cancelled, so the
// step does not wait out the MCP server's own call timeout.
func TestAnMCPCallInFlightEndsWithTheStepsRun(t *testing.T) {
	box := blockingBox{started: make(chan struct{})}
	req := providers.Request{Tools: testTools(), Toolbox: box}
	w, err := listenWorkflow(t.TempDir(), req.Tools, newExtraTools(context.Background(), &req, newLimits(&req)), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan relay.Verdict, 1)
	go func() {
		v, _ := relay.Ask(context.Background(), w.socket, relay.Call{Tool: "slow__wait", Arguments: json.RawMessage(`{}`)})
		got <- v
	}()
	<-box.started
	closed := make(chan struct{})
	go func() { w.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the run's end waited for the tool call in flight")
	}
	if v := <-got; v.Result == nil || !v.Result.IsError {
		t.Fatalf("the cancelled call answered %+v; want an error result", v)
	}
}

type longBox struct{ fileTools }

const longTool = "mcp__github__add_pull_request_review_comment_to_pending_review_x"

func (longBox) Tools() []providers.Tool {
	return []providers.Tool{{Name: longTool}, {Name: "mcp__github__get_me"}}
}

// A served name fits the API's 64 characters after Claude Code's
// mcp__workflow__: a long one is cut and made unique, and a call to it
// reaches the toolbox under the toolbox's own name.
func TestLongMCPToolNamesAreServedWithinTheAPIsLimit(t *testing.T) {
	req := providers.Request{Tools: testTools(), Toolbox: longBox{}}
	x := newExtraTools(context.Background(), &req, newLimits(&req))
	names := x.names()
	if len(names) != 2 || names[1] != "github__get_me" {
		t.Fatalf("served %v", names)
	}
	if n := len("mcp__workflow__" + names[0]); n > 64 {
		t.Fatalf("%s is %d characters as Claude Code names it", names[0], n)
	}
	if x.byName[names[0]] != longTool {
		t.Fatalf("%s maps to %q", names[0], x.byName[names[0]])
	}
}

type keptRecords struct{ recs []providers.ToolRecord }

func (k *keptRecords) Record(r providers.ToolRecord) { k.recs = append(k.recs, r) }

// The step's known secrets are masked in the records of its MCP calls, as
// in the CLI stream's.
func TestMCPCallRecordsMaskTheStepsSecrets(t *testing.T) {
	kept := &keptRecords{}
	r := &maskedRecorder{r: kept, mask: func(s string) string { return strings.ReplaceAll(s, "dummy-PLANTED-0123456789", "[masked]") }}
	r.Record(providers.ToolRecord{Kind: "tool", Name: "mcp__probe__echo", Arguments: json.RawMessage(`{"text":"dummy-PLANTED-0123456789"}`)})
	if len(kept.recs) != 1 || string(kept.recs[0].Arguments) != `{"text":"[masked]"}` {
		t.Fatalf("recorded %+v", kept.recs)
	}
}

// MCP calls the CLI makes at once are each run and recorded, one record at
// a time: the recorder behind them need not be safe for concurrent use
// (keptRecords is not; -race catches an unserialised write).
func TestMCPCallsMadeAtOnceAreEachRunAndRecorded(t *testing.T) {
	kept := &keptRecords{}
	box := &probeBox{}
	req := providers.Request{Tools: testTools(), Toolbox: box, MaxToolCalls: 8}
	req.Record = &maskedRecorder{r: kept, mask: func(s string) string { return s }}
	w, err := listenWorkflow(t.TempDir(), req.Tools, newExtraTools(context.Background(), &req, newLimits(&req)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := relay.Ask(context.Background(), w.socket, relay.Call{Tool: "probe__echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil || v.Result == nil || v.Result.Content != "echo: x" {
				t.Errorf("call: %+v, %v", v, err)
			}
		}()
	}
	wg.Wait()
	if len(kept.recs) != 8 || len(box.calls) != 8 {
		t.Fatalf("%d records, %d calls; want 8 of each", len(kept.recs), len(box.calls))
	}
}

// The tool-call limit is the step's, not each run's: a step whose resumed
// run made its one MCP call and then failed (the session was gone) starts
// the CLI afresh, and the fresh run's call is refused, not run again.
func TestAStepStartedAfreshKeepsItsToolCallsSpent(t *testing.T) {
	h := newHarness(t, "extraresume")
	box := &probeBox{}
	req := h.request()
	req.Toolbox, req.MaxToolCalls = box, 1
	if _, _, err := h.step(req); err != nil { // a session to resume
		t.Fatal(err)
	}
	box.calls = nil
	act, _, err := h.step(req)
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("action = %+v, %v", act, err)
	}
	var got struct{ Content string }
	_ = json.Unmarshal(act.Calls[0].Args, &got)
	if !strings.Contains(got.Content, "heard: Not run: this step's budget of 1 tool calls is spent") {
		t.Errorf("the fresh run's call heard %q; want it refused, the step's one call spent by the resumed run", got.Content)
	}
	if len(box.calls) != 1 {
		t.Errorf("the toolbox ran %v in the step; want the one call", box.calls)
	}
}
