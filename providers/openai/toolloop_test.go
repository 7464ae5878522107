package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// workStep runs fake.WorkDay through an adapter with fake.WorkToolbox and
// checks what every API shares: each tool ran once in order and was
// recorded, the answer ended the step, and usage is the sum of every turn.
func workStep(t *testing.T, r *rig, p providers.Provider, model string) (providers.Action, *fake.Recorder) {
	t.Helper()
	r.script.Add(model, fake.WorkDay("Add now adds.")...)
	box, rec := fake.WorkToolbox(), &fake.Recorder{}
	req := stepRequest()
	req.Toolbox, req.Record = box, rec
	act, u, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || !strings.Contains(string(act.Calls[0].Args), "Add now adds.") {
		t.Fatalf("action %+v; want the new_answer that ends the work day", act)
	}
	var ran []string
	for _, c := range box.Calls() {
		ran = append(ran, c.Name)
	}
	if !slices.Equal(ran, fake.WorkToolNames) {
		t.Fatalf("tools ran %v; want %v", ran, fake.WorkToolNames)
	}
	recs := rec.Records()
	if len(recs) != len(fake.WorkToolNames) || recs[3].Name != "run_command" || recs[3].ResultBytes != len(fake.WorkResult("run_command")) {
		t.Fatalf("records %+v; want one per tool call", recs)
	}
	calls := r.script.Calls()
	if len(calls) != len(fake.WorkToolNames)+1 {
		t.Fatalf("%d requests; want one per turn (%d)", len(calls), len(fake.WorkToolNames)+1)
	}
	var want int64
	for _, c := range calls {
		want += int64(len(c.Body))/4 + 1
		if !slices.Contains(c.Tools, "mcp__docs__lookup") && len(c.Tools) > 0 {
			t.Fatalf("a turn offered %v; want the toolbox's tools beside the workflow tools", c.Tools)
		}
	}
	if u.Input != want {
		t.Fatalf("input tokens %d; want the sum over the loop's turns, %d", u.Input, want)
	}
	return act, rec
}

func TestResponsesToolLoopReplaysFunctionCallOutputs(t *testing.T) {
	tg := targets[0]
	r := newRig(t)
	workStep(t, r, r.open(t, tg), tg.model)
	input := get(r.lastBody(t), "input").([]any)
	var callIDs, outIDs, outputs []string
	for _, it := range input {
		m := it.(map[string]any)
		switch m["type"] {
		case "function_call":
			callIDs = append(callIDs, m["call_id"].(string))
		case "function_call_output":
			outIDs = append(outIDs, m["call_id"].(string))
			outputs = append(outputs, m["output"].(string))
		}
	}
	if len(callIDs) != 5 || !slices.Equal(callIDs, outIDs) || !strings.HasPrefix(callIDs[0], "call_") {
		t.Fatalf("function_call ids %v, outputs for %v; want every call answered under the id the API gave it", callIDs, outIDs)
	}
	if outputs[3] != fake.WorkResult("run_command") {
		t.Fatalf("run_command's output %q; want the tool's result", outputs[3])
	}
}

func TestChatToolLoopReplaysToolMessages(t *testing.T) {
	tg := targets[1]
	r := newRig(t)
	workStep(t, r, r.open(t, tg), tg.model)
	var callIDs, toolIDs, contents []string
	for _, m := range get(r.lastBody(t), "messages").([]any) {
		msg := m.(map[string]any)
		for _, tc := range asList(msg["tool_calls"]) {
			callIDs = append(callIDs, get(tc, "id").(string))
		}
		if msg["role"] == "tool" {
			toolIDs = append(toolIDs, msg["tool_call_id"].(string))
			contents = append(contents, msg["content"].(string))
		}
	}
	if len(callIDs) != 5 || !slices.Equal(callIDs, toolIDs) || !strings.HasPrefix(callIDs[0], "call_") {
		t.Fatalf("tool_calls ids %v, tool messages for %v; want each call answered by a tool message with its id", callIDs, toolIDs)
	}
	if contents[0] != fake.WorkResult("read_file") {
		t.Fatalf("read_file's tool message %q; want the file", contents[0])
	}
}

func TestTextModeToolLoopReplaysResultsAsText(t *testing.T) {
	tg := targets[1]
	r := newRig(t)
	workStep(t, r, r.openWith(t, tg, openai.Options{TextTools: true}), tg.model)
	msgs := get(r.lastBody(t), "messages").([]any)
	if !strings.Contains(get(msgs, 0, "content").(string), "### mcp__docs__lookup") {
		t.Fatal("the system text does not describe the toolbox's tools")
	}
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "user" || !strings.HasPrefix(last["content"].(string), "Result of mcp__docs__lookup:\n") {
		t.Fatalf("last message %v; want the MCP tool's result as a user message", last)
	}
	if prev := msgs[len(msgs)-2].(map[string]any); prev["role"] != "assistant" || !strings.Contains(prev["content"].(string), `"mcp__docs__lookup"`) {
		t.Fatalf("assistant message %v; want the JSON the model wrote", prev)
	}
}

func TestResponsesWebSearchIsTheHostedTool(t *testing.T) {
	tg := targets[0]
	r := newRig(t)
	r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyWebSearch, Query: "go integer overflow", Content: "found it"})
	rec := &fake.Recorder{}
	req := stepRequest()
	req.WebSearch, req.Record = true, rec
	act, _, err := r.open(t, tg).Step(context.Background(), req)
	if err != nil || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("got %+v, %v; want the answer after the search", act, err)
	}
	tools := get(r.lastBody(t), "tools").([]any)
	if !slices.ContainsFunc(tools, func(t any) bool { return get(t, "type") == "web_search" }) {
		t.Fatalf("tools %v; want a {\"type\":\"web_search\"} entry", tools)
	}
	recs := rec.Records()
	if len(recs) != 1 || recs[0].Kind != "web_search" || string(recs[0].Arguments) != `{"query":"go integer overflow"}` {
		t.Fatalf("records %+v; want the search recorded with its query", recs)
	}
}

func TestWebSearchIsNotAskedWhenNotWanted(t *testing.T) {
	tg := targets[0]
	r := newRig(t)
	if _, _, err := r.open(t, tg).Step(context.Background(), stepRequest()); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(get(r.lastBody(t), "tools"))
	if strings.Contains(string(b), "web_search") {
		t.Fatalf("tools %s; want no web search unless the agent has it", b)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestResponsesToolLoopCarriesEncryptedReasoningBack(t *testing.T) {
	tg := targets[0] // gpt-5-mini reasons
	r := newRig(t)
	r.script.Add(tg.model,
		fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"a"}`), Usage: &fake.Usage{Reasoning: 12}},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "done"})
	req := stepRequest()
	req.Toolbox = &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	// With store false the fake refuses a reasoning item that comes back
	// without the encrypted content it gave out.
	if _, _, err := r.open(t, tg).Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	calls := r.script.Calls()
	var first map[string]any
	if err := json.Unmarshal(calls[0].Body, &first); err != nil {
		t.Fatal(err)
	}
	if inc, _ := json.Marshal(first["include"]); string(inc) != `["reasoning.encrypted_content"]` {
		t.Fatalf("include %s; want the encrypted reasoning asked for in a tool loop", inc)
	}
	var kinds []string
	for _, it := range get(r.lastBody(t), "input").([]any) {
		m := it.(map[string]any)
		kind, _ := m["type"].(string)
		if kind == "" {
			kind = "message" // an easy input message: role and content
		}
		kinds = append(kinds, kind)
		if m["type"] == "reasoning" && !strings.HasPrefix(fmt.Sprint(m["encrypted_content"]), "gAAAAA") {
			t.Fatalf("reasoning item %v carries no encrypted content", m)
		}
	}
	if got := strings.Join(kinds, ","); got != "message,reasoning,function_call,function_call_output" {
		t.Fatalf("input items %s; want the reasoning replayed before its call", got)
	}
}
