package openai_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

func ptr[T any](v T) *T { return &v }

// absent marks a request field that must not be sent.
type absent struct{}

func TestChatRequestShape(t *testing.T) {
	cases := []struct {
		name, backend, model string
		effort               string
		want                 map[string]any // top-level field → value (absent{} = not sent)
	}{
		{"open model", "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", "", map[string]any{
			"temperature": 0.3, "max_tokens": 2048.0, "max_completion_tokens": absent{}, "reasoning_effort": absent{}}},
		{"OpenAI reasoning model via OpenRouter", "openrouter", "openai/gpt-5", "", map[string]any{
			"temperature": absent{}, "max_completion_tokens": 2048.0, "max_tokens": absent{}, "reasoning_effort": "medium"}},
		{"o-series on Azure", "azure_openai", "o4-mini", "high", map[string]any{
			"temperature": absent{}, "max_completion_tokens": 2048.0, "reasoning_effort": "high"}},
		{"grok-4 reasons always", "grok", "grok-4.20-0309-reasoning", "high", map[string]any{
			"temperature": 0.3, "max_completion_tokens": 2048.0, "reasoning_effort": absent{}}},
		{"grok-3-mini knows low and high", "grok", "grok-3-mini", "medium", map[string]any{
			"temperature": 0.3, "reasoning_effort": "high"}},
		{"deepseek-reasoner ignores temperature", "deepseek", "deepseek-reasoner", "", map[string]any{
			"temperature": absent{}, "max_tokens": 2048.0, "reasoning_effort": absent{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			tg := target{format: "chat", backend: c.backend, model: c.model}
			req := stepRequest()
			req.Temperature, req.MaxOutputTokens, req.ReasoningEffort = ptr(0.3), 2048, c.effort
			if _, _, err := r.open(t, tg).Step(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			b := r.lastBody(t)
			checkFields(t, b, c.want)
			checkFields(t, b, map[string]any{
				"model":                        c.model,
				"stream":                       true,
				"tool_choice":                  "required",
				"stream_options":               map[string]any{"include_usage": true},
				"messages.0.role":              "system",
				"messages.0.content":           req.System,
				"messages.1.role":              "user",
				"messages.1.content":           req.Prompt,
				"tools.0.type":                 "function",
				"tools.0.function.name":        "new_answer",
				"tools.0.function.description": req.Tools[0].Description,
				"tools.0.function.parameters":  decode(req.Tools[0].Schema),
				"tools.1.function.name":        "vote",
				"tools.1.function.parameters":  decode(req.Tools[1].Schema),
				"tools.1.function.parameters.properties.agent_id.enum": []any{"agent1", "agent2"},
			})
			if calls := r.script.Calls(); !reflect.DeepEqual(calls[0].VoteEnum, []string{"agent1", "agent2"}) {
				t.Errorf("the fake read vote enum %v", calls[0].VoteEnum)
			}
		})
	}
}

func TestResponsesRequestShape(t *testing.T) {
	cases := []struct {
		name, model, effort string
		want                map[string]any
	}{
		{"reasoning model, default effort", "gpt-5-mini", "", map[string]any{
			"reasoning": map[string]any{"effort": "medium"}, "temperature": absent{}}},
		{"reasoning model, effort asked", "gpt-5.4", "high", map[string]any{
			"reasoning": map[string]any{"effort": "high"}, "temperature": absent{}}},
		{"o-series", "o3", "low", map[string]any{
			"reasoning": map[string]any{"effort": "low"}, "temperature": absent{}}},
		{"non-reasoning model", "gpt-4.1", "high", map[string]any{
			"reasoning": absent{}, "temperature": 0.3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			tg := target{format: "responses", backend: "openai", model: c.model}
			req := stepRequest()
			req.Temperature, req.MaxOutputTokens, req.ReasoningEffort = ptr(0.3), 4096, c.effort
			if _, _, err := r.open(t, tg).Step(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			b := r.lastBody(t)
			checkFields(t, b, c.want)
			checkFields(t, b, map[string]any{
				"model":                    c.model,
				"stream":                   true,
				"store":                    false,
				"instructions":             req.System,
				"input.0.role":             "user",
				"input.0.content":          req.Prompt,
				"tool_choice":              "required",
				"parallel_tool_calls":      false,
				"max_output_tokens":        4096.0,
				"tools.0.type":             "function",
				"tools.0.name":             "new_answer",
				"tools.0.strict":           false,
				"tools.0.description":      req.Tools[0].Description,
				"tools.0.parameters":       decode(req.Tools[0].Schema),
				"tools.1.name":             "vote",
				"tools.1.parameters":       decode(req.Tools[1].Schema),
				"messages":                 absent{},
				"stream_options":           absent{}, // usage comes with response.completed
				"previous_response_id":     absent{},
				"prompt_cache_key.present": true,
			})
		})
	}
}

func TestPromptCacheKeyFollowsTheStablePrefix(t *testing.T) {
	r := newRig(t)
	p := r.open(t, targets[0])
	key := func(prefix string) any {
		req := stepRequest()
		req.StablePrefix = prefix
		if _, _, err := p.Step(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return r.lastBody(t)["prompt_cache_key"]
	}
	a, a2, b, none := key("task A"), key("task A"), key("task B"), key("")
	if a != a2 || a == b || none != nil || !strings.HasPrefix(a.(string), "massgen-") {
		t.Fatalf("prompt_cache_key: %v, %v, %v, %v; want stable per prefix, distinct across prefixes, none without one", a, a2, b, none)
	}
}

// history is three refused attempts of one step, of every kind a provider
// must replay.
func history() []providers.Turn {
	return []providers.Turn{
		{Reply: providers.Action{Calls: []providers.ToolCall{providers.VoteCall("agent9", "best")}},
			Problem: "agent9 has no answer; vote for agent1 or agent2."},
		{Reply: providers.Action{Text: "Let me think about it."},
			Problem: "You did not call a workflow tool. Finish by calling exactly one of: new_answer, vote."},
		{Reply: providers.Action{Calls: []providers.ToolCall{{Name: "new_answer", Args: json.RawMessage(`{"content": "cut`)}}},
			Problem: `new_answer needs a JSON object {"content": "<your complete answer>"}.`},
		{Reply: providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall("42"), providers.VoteCall("agent1", "same")}},
			Problem: "Call exactly one workflow tool; you called 2 (new_answer, vote). Choose one."},
	}
}

func TestChatReplaysHistoryAsAConversation(t *testing.T) {
	r := newRig(t)
	tg := targets[1]
	req := stepRequest()
	req.History = history()
	// The fake answers 400, as OpenAI does, if a tool message does not
	// answer a call or a call goes unanswered.
	if _, _, err := r.open(t, tg).Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	h := req.History
	b := r.lastBody(t)
	checkFields(t, b, map[string]any{
		"messages.2.role":                            "assistant",
		"messages.2.tool_calls.0.id":                 "call_retry1_1",
		"messages.2.tool_calls.0.type":               "function",
		"messages.2.tool_calls.0.function.name":      "vote",
		"messages.2.tool_calls.0.function.arguments": string(h[0].Reply.Calls[0].Args),
		"messages.3.role":                            "tool",
		"messages.3.tool_call_id":                    "call_retry1_1",
		"messages.3.content":                         h[0].Problem,
		"messages.4.role":                            "assistant",
		"messages.4.content":                         "Let me think about it.",
		"messages.5.role":                            "user",
		"messages.5.content":                         h[1].Problem,
		// Arguments that are not JSON go back as the assistant's text.
		"messages.6.role":            "assistant",
		"messages.6.tool_calls":      absent{},
		"messages.7.role":            "user",
		"messages.7.content":         h[2].Problem,
		"messages.8.tool_calls.0.id": "call_retry4_1",
		"messages.8.tool_calls.1.id": "call_retry4_2",
		"messages.9.tool_call_id":    "call_retry4_1",
		"messages.10.tool_call_id":   "call_retry4_2",
		"messages.10.content":        h[3].Problem,
		"messages.11":                absent{},
	})
	if s, _ := get(b, "messages", 6, "content").(string); !strings.Contains(s, `"tool": "new_answer"`) || !strings.Contains(s, `cut`) {
		t.Errorf("malformed call replayed as %q, want its name and raw arguments", s)
	}
}

func TestResponsesReplaysHistoryAsItems(t *testing.T) {
	r := newRig(t)
	req := stepRequest()
	req.History = history()
	// The fake answers 400, as OpenAI does, for an output without its call.
	if _, _, err := r.open(t, targets[0]).Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	h := req.History
	checkFields(t, r.lastBody(t), map[string]any{
		"input.0.role":      "user",
		"input.1.type":      "function_call",
		"input.1.call_id":   "call_retry1_1",
		"input.1.name":      "vote",
		"input.1.arguments": string(h[0].Reply.Calls[0].Args),
		"input.2.type":      "function_call_output",
		"input.2.call_id":   "call_retry1_1",
		"input.2.output":    h[0].Problem,
		"input.3.role":      "assistant",
		"input.3.content":   "Let me think about it.",
		"input.4.role":      "user",
		"input.4.content":   h[1].Problem,
		"input.5.role":      "assistant",
		"input.6.content":   h[2].Problem,
		"input.7.call_id":   "call_retry4_1",
		"input.8.call_id":   "call_retry4_2",
		"input.9.type":      "function_call_output",
		"input.9.call_id":   "call_retry4_1",
		"input.10.call_id":  "call_retry4_2",
		"input.10.output":   h[3].Problem,
		"input.11":          absent{},
	})
}

func TestTextModeReplaysHistoryAsText(t *testing.T) {
	for _, tg := range targets[:2] {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			req := stepRequest()
			req.History = history()[:1]
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "ok"})
			act, _, err := r.openWith(t, tg, openai.Options{TextTools: true}).Step(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(act.Calls) != 1 || act.Calls[0].Name != "vote" {
				t.Fatalf("calls = %s", show(act.Calls))
			}
			list := "messages"
			first := 2
			if tg.format == "responses" {
				list, first = "input", 1
			}
			b := r.lastBody(t)
			asst, _ := get(b, list, first, "content").(string)
			if get(b, list, first, "role") != "assistant" || !strings.Contains(asst, `"tool": "vote"`) || !strings.Contains(asst, "agent9") {
				t.Errorf("the refused vote was replayed as %q", asst)
			}
			if get(b, list, first+1, "role") != "user" || get(b, list, first+1, "content") != req.History[0].Problem {
				t.Errorf("the problem was not replayed as the user's reply: %v", get(b, list, first+1))
			}
		})
	}
}

// checkFields compares dotted paths of a decoded request with wanted values;
// a path ending in ".present" only checks that the field is there.
func checkFields(t *testing.T, body map[string]any, want map[string]any) {
	t.Helper()
	for path, w := range want {
		parts := strings.Split(path, ".")
		present := parts[len(parts)-1] == "present"
		if present {
			parts = parts[:len(parts)-1]
		}
		keys := make([]any, len(parts))
		for i, p := range parts {
			if n, err := strconv.Atoi(p); err == nil {
				keys[i] = n
			} else {
				keys[i] = p
			}
		}
		got := get(body, keys...)
		switch {
		case present:
			if got == nil {
				t.Errorf("%s is missing", strings.Join(parts, "."))
			}
		case w == absent{}:
			if got != nil {
				t.Errorf("%s = %v, want it not sent", path, got)
			}
		case !reflect.DeepEqual(got, w):
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(w)
			t.Errorf("%s = %s, want %s", path, gj, wj)
		}
	}
}

func decode(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}
