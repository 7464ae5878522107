package anthropic

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// workStep runs fake.WorkDay with fake.WorkToolbox and checks the loop's
// common ground: every tool ran in order and was recorded, the answer ended
// the step, one request per turn.
func workStep(t *testing.T, f *fakeServer, p *Provider, req providers.Request) {
	t.Helper()
	f.script.Add(p.model, fake.WorkDay("Add now adds.")...)
	box, rec := fake.WorkToolbox(), &fake.Recorder{}
	req.Toolbox, req.Record = box, rec
	act, u, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action %+v; want the new_answer that ends the work day", act)
	}
	var ran []string
	for _, c := range box.Calls() {
		ran = append(ran, c.Name)
	}
	if !slices.Equal(ran, fake.WorkToolNames) || len(rec.Records()) != len(ran) {
		t.Fatalf("tools ran %v (%d records); want %v", ran, len(rec.Records()), fake.WorkToolNames)
	}
	if n := len(f.script.Calls()); n != 6 {
		t.Fatalf("%d requests; want 6", n)
	}
	if u.CostUSD == nil || *u.CostUSD <= 0 || u.Input < 6*100 {
		t.Fatalf("usage %+v; want six priced turns summed", u)
	}
}

// exchanges reads the tool_use ids of assistant messages and the tool_result
// blocks of user messages from a request body.
func exchanges(t *testing.T, body map[string]any) (uses []string, results []map[string]any, firsts []string) {
	t.Helper()
	for _, m := range body["messages"].([]any) {
		msg := m.(map[string]any)
		blocks, _ := msg["content"].([]any)
		for i, b := range blocks {
			blk := b.(map[string]any)
			if msg["role"] == "assistant" && i == 0 {
				firsts = append(firsts, blk["type"].(string))
			}
			switch blk["type"] {
			case "tool_use":
				uses = append(uses, blk["id"].(string))
			case "tool_result":
				results = append(results, blk)
			}
		}
	}
	return uses, results, firsts
}

func TestToolLoopAnswersEachToolUseWithItsToolResult(t *testing.T) {
	f := newFake(t)
	workStep(t, f, f.provider(t, testModel), stepRequest())
	uses, results, _ := exchanges(t, f.body(t))
	if len(uses) != 5 || len(results) != 5 {
		t.Fatalf("%d tool_use, %d tool_result blocks; want 5 each", len(uses), len(results))
	}
	for i, r := range results {
		if r["tool_use_id"] != uses[i] || !strings.HasPrefix(uses[i], "toolu_fake_") {
			t.Fatalf("result %d answers %v; want the API's id %s", i, r["tool_use_id"], uses[i])
		}
	}
	if got := results[3]["content"].([]any)[0].(map[string]any)["text"]; got != fake.WorkResult("run_command") {
		t.Fatalf("run_command's tool_result %v; want the tool's output", got)
	}
}

func TestToolLoopWithThinkingSendsSignedThinkingBack(t *testing.T) {
	f := newFake(t)
	req := stepRequest()
	req.ReasoningEffort = "low" // claude-sonnet-4-5 thinks on a budget
	// The fake refuses a tool-using assistant turn that does not start with
	// the signed thinking block it sent.
	workStep(t, f, f.provider(t, testModel), req)
	_, _, firsts := exchanges(t, f.body(t))
	if len(firsts) != 5 || slices.ContainsFunc(firsts, func(s string) bool { return s != "thinking" }) {
		t.Fatalf("assistant turns start with %v; want each with its thinking block", firsts)
	}
}

func TestToolLoopMarksFailedToolsIsError(t *testing.T) {
	f := newFake(t)
	p := f.provider(t, testModel)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"nope"}`)},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "x"})
	req := stepRequest()
	req.Toolbox = &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}, Run: func(context.Context, string, json.RawMessage) (providers.ToolResult, error) {
		return providers.ToolResult{Content: "no such file: nope", IsError: true}, nil
	}}
	if _, _, err := p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, results, _ := exchanges(t, f.body(t))
	if len(results) != 1 || results[0]["is_error"] != true {
		t.Fatalf("tool_result %v; want is_error true", results)
	}
}

func TestWebSearchIsTheServerTool(t *testing.T) {
	f := newFake(t)
	p := f.provider(t, testModel)
	// A search, then a toolbox call, then the answer: the second request
	// must carry the server tool's blocks back verbatim.
	f.script.Add(testModel,
		fake.Reply{Kind: fake.ReplyWebSearch, Query: "go overflow", Tool: "read_file", Input: json.RawMessage(`{"path":"a"}`)},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "x"})
	rec := &fake.Recorder{}
	req := stepRequest()
	req.WebSearch, req.Record = true, rec
	req.Toolbox = &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	if _, _, err := p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := f.body(t)
	var search map[string]any
	for _, tl := range body["tools"].([]any) {
		if m := tl.(map[string]any); m["type"] == "web_search_20250305" {
			search = m
		}
	}
	if search == nil || search["name"] != "web_search" || search["max_uses"] != float64(webSearchMaxUses) {
		t.Fatalf("tools %v; want the web_search_20250305 server tool", body["tools"])
	}
	asst := body["messages"].([]any)[1].(map[string]any)["content"].([]any)
	var kinds []string
	for _, b := range asst {
		kinds = append(kinds, b.(map[string]any)["type"].(string))
	}
	if !slices.Equal(kinds, []string{"server_tool_use", "web_search_tool_result", "tool_use"}) {
		t.Fatalf("replayed assistant blocks %v; want the server tool's blocks kept", kinds)
	}
	recs := rec.Records()
	if len(recs) != 2 || recs[0].Kind != "web_search" || string(recs[0].Arguments) != `{"query":"go overflow"}` || recs[1].Name != "read_file" {
		t.Fatalf("records %+v; want the search, then the read", recs)
	}
}
