package gemini

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// lastBody decodes the last request the fake recorded.
func (r *rig) lastBody(t *testing.T) map[string]any {
	t.Helper()
	calls := r.script.Calls()
	var m map[string]any
	if err := json.Unmarshal(calls[len(calls)-1].Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestToolLoopAnswersFunctionCallsWithFunctionResponses(t *testing.T) {
	for _, model := range []string{flash, flash3} {
		t.Run(model, func(t *testing.T) {
			r := newRig(t, model)
			r.script.Add(model, fake.WorkDay("Add now adds.")...)
			box, rec := fake.WorkToolbox(), &fake.Recorder{}
			req := stepRequest(newAnswerTool(), voteTool("agent1"))
			req.Toolbox, req.Record = box, rec
			// For Gemini 3 the fake refuses any replayed function call
			// without the thought signature it issued.
			act, u, err := r.p.Step(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || len(box.Calls()) != 5 || len(rec.Records()) != 5 {
				t.Fatalf("action %+v after %d tool calls; want the answer after five", act, len(box.Calls()))
			}
			if u.Input < 6 {
				t.Fatalf("usage %+v; want six turns summed", u)
			}
			var names []string
			var signed int
			var outputs []any
			for _, c := range r.lastBody(t)["contents"].([]any) {
				for _, p := range c.(map[string]any)["parts"].([]any) {
					part := p.(map[string]any)
					if fc, ok := part["functionCall"].(map[string]any); ok {
						names = append(names, fc["name"].(string))
						if part["thoughtSignature"] != nil {
							signed++
						}
					}
					if fr, ok := part["functionResponse"].(map[string]any); ok {
						outputs = append(outputs, fr["response"].(map[string]any)["output"])
						if fr["name"] != names[len(names)-1] {
							t.Fatalf("functionResponse for %v after a call of %s", fr["name"], names[len(names)-1])
						}
					}
				}
			}
			if !slices.Equal(names, fake.WorkToolNames) || len(outputs) != 5 || outputs[3] != fake.WorkResult("run_command") {
				t.Fatalf("calls %v, outputs %v; want each call answered by its result", names, outputs)
			}
			if want := map[bool]int{true: 5, false: 0}[model == flash3]; signed != want {
				t.Fatalf("%d signed calls replayed; want %d", signed, want)
			}
		})
	}
}

func TestToolLoopSendsFailuresUnderError(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"x"}`)},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "x"})
	req := stepRequest(newAnswerTool())
	req.Toolbox = &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}, Run: func(context.Context, string, json.RawMessage) (providers.ToolResult, error) {
		return providers.ToolResult{Content: "no such file", IsError: true}, nil
	}}
	if _, _, err := r.p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	contents := r.lastBody(t)["contents"].([]any)
	resp := get(contents[len(contents)-1], "parts", 0, "functionResponse", "response")
	if m, _ := resp.(map[string]any); m["error"] != "no such file" {
		t.Fatalf("functionResponse.response %v; want the failure under error", resp)
	}
}

func TestWebSearchIsGoogleSearchGroundingOnGemini3(t *testing.T) {
	for _, model := range []string{flash3, flash} {
		t.Run(model, func(t *testing.T) {
			r := newRig(t, model)
			r.script.Add(model, fake.Reply{Kind: fake.ReplyWebSearch, Query: "go overflow", Content: "x"})
			rec := &fake.Recorder{}
			req := stepRequest(newAnswerTool())
			req.WebSearch, req.Record = true, rec
			if _, _, err := r.p.Step(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			tools := r.lastBody(t)["tools"].([]any)
			has := slices.ContainsFunc(tools, func(t any) bool { _, ok := t.(map[string]any)["googleSearch"]; return ok })
			if has != (model == flash3) {
				t.Fatalf("tools %v; want googleSearch only where it combines with function calling (Gemini 3)", tools)
			}
			recs := rec.Records()
			if len(recs) != 1 || recs[0].Kind != "web_search" || string(recs[0].Arguments) != `{"query":"go overflow"}` {
				t.Fatalf("records %+v; want the grounding search recorded", recs)
			}
		})
	}
}

// get walks decoded JSON by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
