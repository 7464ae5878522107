package anthropic

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// wire is the recorded request, read back from the fake.
type wire struct {
	Model     string
	MaxTokens int64 `json:"max_tokens"`
	Stream    bool
	System    []struct {
		Type         string
		Text         string
		CacheControl map[string]any `json:"cache_control"`
	}
	Messages []struct {
		Role    string
		Content []struct {
			Type         string
			Text         string
			CacheControl map[string]any `json:"cache_control"`
			ID           string
			Name         string
			Input        json.RawMessage
			ToolUseID    string `json:"tool_use_id"`
			IsError      *bool  `json:"is_error"`
			Content      []struct{ Type, Text string }
		}
	}
	Tools []struct {
		Name        string
		Description string
		InputSchema json.RawMessage `json:"input_schema"`
	}
	ToolChoice   map[string]any `json:"tool_choice"`
	Temperature  *float64
	Thinking     map[string]any
	OutputConfig map[string]any `json:"output_config"`
}

func sent(t *testing.T, f *fakeServer) wire {
	t.Helper()
	calls := f.script.Calls()
	if len(calls) == 0 {
		t.Fatal("the fake recorded no call")
	}
	var w wire
	if err := json.Unmarshal(calls[len(calls)-1].Body, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

func step(t *testing.T, f *fakeServer, model string, req providers.Request) wire {
	t.Helper()
	if _, _, err := f.provider(t, model).Step(context.Background(), req); err != nil {
		t.Fatalf("step: %v", err)
	}
	return sent(t, f)
}

func ephemeralCache(cc map[string]any) bool { return cc != nil && cc["type"] == "ephemeral" }

func TestCacheBreakpointsEndSystemAndStablePrefix(t *testing.T) {
	f := newFake(t)
	w := step(t, f, testModel, stepRequest())
	if len(w.System) != 1 || w.System[0].Text != testSystem || !ephemeralCache(w.System[0].CacheControl) {
		t.Errorf("system = %+v, want the system text with an ephemeral breakpoint", w.System)
	}
	if len(w.Messages) != 1 || w.Messages[0].Role != "user" {
		t.Fatalf("messages = %+v, want one user message", w.Messages)
	}
	c := w.Messages[0].Content
	if len(c) != 2 {
		t.Fatalf("user content = %+v, want the stable prefix and the answers block", c)
	}
	if c[0].Text != testPrefix || !ephemeralCache(c[0].CacheControl) {
		t.Errorf("first block = %q %v, want the stable prefix with a breakpoint", c[0].Text, c[0].CacheControl)
	}
	if c[1].Text != testShown || c[1].CacheControl != nil {
		t.Errorf("second block = %q %v, want the answers block, uncached", c[1].Text, c[1].CacheControl)
	}
}

func TestBlindStepIsOneCachedBlock(t *testing.T) {
	f := newFake(t)
	req := stepRequest()
	req.Prompt, req.Tools = testPrefix, []providers.Tool{answerTool}
	c := step(t, f, testModel, req).Messages[0].Content
	if len(c) != 1 || c[0].Text != testPrefix || !ephemeralCache(c[0].CacheControl) {
		t.Errorf("content = %+v, want the whole prompt as the cached prefix", c)
	}
	// A prefix that is not a prefix of the prompt is not trusted.
	req.StablePrefix = "something else"
	c = step(t, f, testModel, req).Messages[0].Content
	if len(c) != 1 || c[0].CacheControl != nil {
		t.Errorf("content = %+v, want one uncached block", c)
	}
}

func TestToolsAndToolChoice(t *testing.T) {
	f := newFake(t)
	w := step(t, f, testModel, stepRequest())
	if len(w.Tools) != 2 || w.Tools[0].Name != "new_answer" || w.Tools[1].Name != "vote" || w.Tools[1].Description != voteTool.Description {
		t.Fatalf("tools = %+v", w.Tools)
	}
	var got, want any
	_ = json.Unmarshal(w.Tools[1].InputSchema, &got)
	_ = json.Unmarshal(voteTool.Schema, &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("vote input_schema = %s, want %s", w.Tools[1].InputSchema, voteTool.Schema)
	}
	if w.ToolChoice["type"] != "any" || w.ToolChoice["disable_parallel_tool_use"] != true {
		t.Errorf("tool_choice = %v, want any without parallel calls", w.ToolChoice)
	}
	req := stepRequest()
	req.Tools = []providers.Tool{voteTool}
	w = step(t, f, testModel, req)
	if w.ToolChoice["type"] != "tool" || w.ToolChoice["name"] != "vote" {
		t.Errorf("one tool: tool_choice = %v, want that tool", w.ToolChoice)
	}
	req.Tools = nil
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyText, Content: "The final answer is 391."})
	act, _, err := f.provider(t, testModel).Step(context.Background(), req)
	w = sent(t, f)
	if err != nil || w.Tools != nil || w.ToolChoice != nil || act.Text != "The final answer is 391." || len(act.Calls) != 0 {
		t.Errorf("no tools: err %v, tools %v, tool_choice %v, action %+v", err, w.Tools, w.ToolChoice, act)
	}
}

func TestMaxTokensAndTemperature(t *testing.T) {
	f := newFake(t)
	w := step(t, f, testModel, stepRequest())
	if w.MaxTokens != defaultMaxTokens || w.Temperature != nil || w.Thinking != nil || !w.Stream || w.Model != testModel {
		t.Errorf("defaults: max_tokens %d, temperature %v, thinking %v, stream %v, model %q", w.MaxTokens, w.Temperature, w.Thinking, w.Stream, w.Model)
	}
	req := stepRequest()
	temp := 0.3
	req.Temperature, req.MaxOutputTokens = &temp, 1000
	w = step(t, f, testModel, req)
	if w.MaxTokens != 1000 || w.Temperature == nil || *w.Temperature != 0.3 {
		t.Errorf("max_tokens %d, temperature %v; want 1000, 0.3", w.MaxTokens, w.Temperature)
	}
	hot := 1.7
	req.Temperature = &hot
	if w = step(t, f, testModel, req); w.Temperature == nil || *w.Temperature != 1 {
		t.Errorf("temperature 1.7 sent as %v, want clamped to 1", w.Temperature)
	}
}

func TestReasoningEffortBecomesThinking(t *testing.T) {
	temp := 0.2
	cases := []struct {
		model, effort string
		maxOut        int
		thinking      map[string]any // nil: none
		effortSent    string
		maxTokens     int64
	}{
		{"claude-opus-4-6", "high", 0, map[string]any{"type": "adaptive"}, "high", 4096 + 16384},
		{"claude-sonnet-4-6", "minimal", 2000, map[string]any{"type": "adaptive"}, "low", 2000},
		{"claude-opus-5", "medium", 0, map[string]any{"type": "adaptive"}, "medium", 4096 + 8192},
		{"claude-sonnet-4-5-20250929", "medium", 0, map[string]any{"type": "enabled", "budget_tokens": 8192.0}, "", 4096 + 8192},
		{"claude-sonnet-4-20250514", "low", 0, map[string]any{"type": "enabled", "budget_tokens": 2048.0}, "", 4096 + 2048},
		{"claude-3-7-sonnet-latest", "high", 3000, map[string]any{"type": "enabled", "budget_tokens": 1500.0}, "", 3000},
		{"claude-opus-4-1", "high", 1500, nil, "", 1500}, // half the cap is below the 1024 minimum
		{"claude-3-5-haiku-latest", "high", 0, nil, "", 4096},
		{"claude-opus-4-6", "", 0, nil, "", 4096},
	}
	for _, c := range cases {
		t.Run(c.model+"/"+c.effort, func(t *testing.T) {
			f := newFake(t)
			req := stepRequest()
			req.ReasoningEffort, req.MaxOutputTokens, req.Temperature = c.effort, c.maxOut, &temp
			w := step(t, f, c.model, req)
			if !reflect.DeepEqual(w.Thinking, c.thinking) {
				t.Errorf("thinking = %v, want %v", w.Thinking, c.thinking)
			}
			if got, _ := w.OutputConfig["effort"].(string); got != c.effortSent {
				t.Errorf("output_config.effort = %q, want %q", got, c.effortSent)
			}
			if w.MaxTokens != c.maxTokens {
				t.Errorf("max_tokens = %d, want %d", w.MaxTokens, c.maxTokens)
			}
			if c.thinking != nil {
				if w.ToolChoice["type"] != "auto" || w.Temperature != nil {
					t.Errorf("thinking on, yet tool_choice %v and temperature %v", w.ToolChoice, w.Temperature)
				}
			} else if w.ToolChoice["type"] != "any" || w.Temperature == nil {
				t.Errorf("thinking off, yet tool_choice %v and temperature %v", w.ToolChoice, w.Temperature)
			}
		})
	}
}

func TestThinkingRepliesSkipTheThinkingBlock(t *testing.T) {
	f := newFake(t)
	f.script.Add("claude-opus-4-6", fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "r", Usage: &fake.Usage{Output: 300, Reasoning: 200}})
	req := stepRequest()
	req.ReasoningEffort = "high"
	act, u, err := f.provider(t, "claude-opus-4-6").Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != "vote" || act.Text != "" {
		t.Errorf("action = %+v, want the vote alone", act)
	}
	if u.Output != 300 || u.Reasoning != 200 {
		t.Errorf("usage = %+v, want output 300 of which reasoning 200", u)
	}
}

func TestHistoryIsReplayedAsToolResults(t *testing.T) {
	f := newFake(t)
	req := stepRequest()
	req.History = []providers.Turn{
		{Reply: providers.Action{Text: "Voting now.", Calls: []providers.ToolCall{providers.VoteCall("agent9", "best")}},
			Problem: "agent9 has no answer; vote for agent1 or agent2."},
		{Reply: providers.Action{Text: "I think it is 391."}, Problem: "Call exactly one of the tools."},
		{Reply: providers.Action{Calls: []providers.ToolCall{{Name: "new_answer", Args: json.RawMessage(`{"content": "39`)}}},
			Problem: "The arguments are not valid JSON."},
		{Reply: providers.Action{Calls: []providers.ToolCall{{Name: "shout", Args: json.RawMessage(`{}`)}}},
			Problem: "There is no tool shout."},
	}
	req.Attempt = len(req.History)
	w := step(t, f, testModel, req)
	roles := make([]string, len(w.Messages))
	for i, m := range w.Messages {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant,user,assistant,user,assistant,user" {
		t.Fatalf("roles = %s", got)
	}
	// Attempt 1: text and a tool_use, answered by an is_error tool_result.
	a, u := w.Messages[1].Content, w.Messages[2].Content
	if len(a) != 2 || a[0].Text != "Voting now." || a[1].Type != "tool_use" || a[1].Name != "vote" || a[1].ID == "" {
		t.Fatalf("attempt 1 assistant = %+v", a)
	}
	var in map[string]string
	if err := json.Unmarshal(a[1].Input, &in); err != nil || in["agent_id"] != "agent9" {
		t.Errorf("attempt 1 input = %s", a[1].Input)
	}
	if len(u) != 1 || u[0].Type != "tool_result" || u[0].ToolUseID != a[1].ID || u[0].IsError == nil || !*u[0].IsError ||
		len(u[0].Content) != 1 || u[0].Content[0].Text != req.History[0].Problem {
		t.Errorf("attempt 1 user = %+v", u)
	}
	// Attempt 2: prose, answered by the problem as text.
	if a, u := w.Messages[3].Content, w.Messages[4].Content; len(a) != 1 || a[0].Text != "I think it is 391." || len(u) != 1 || u[0].Type != "text" || u[0].Text != "Call exactly one of the tools." {
		t.Errorf("attempt 2 = %+v / %+v", a, u)
	}
	// Attempt 3: broken arguments go as an empty object.
	if a := w.Messages[5].Content; len(a) != 1 || a[0].Type != "tool_use" || string(a[0].Input) != "{}" {
		t.Errorf("attempt 3 = %+v", a)
	}
	// Attempt 4: a tool never offered is replayed as text.
	if a, u := w.Messages[7].Content, w.Messages[8].Content; len(a) != 1 || a[0].Type != "text" || !strings.Contains(a[0].Text, "shout({})") || u[0].Text != "There is no tool shout." {
		t.Errorf("attempt 4 = %+v / %+v", a, u)
	}
	// Nothing after the stable prefix is cached.
	for _, m := range w.Messages[1:] {
		for _, c := range m.Content {
			if c.CacheControl != nil {
				t.Errorf("a replayed block carries cache_control: %+v", c)
			}
		}
	}
}

func TestHistoryWithThinkingIsReplayedAsText(t *testing.T) {
	f := newFake(t)
	req := stepRequest()
	req.ReasoningEffort = "high"
	req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.VoteCall("agent9", "best")}}, Problem: "agent9 has no answer."}}
	w := step(t, f, "claude-opus-4-6", req)
	if len(w.Messages) != 3 {
		t.Fatalf("messages = %+v", w.Messages)
	}
	a, u := w.Messages[1].Content, w.Messages[2].Content
	if len(a) != 1 || a[0].Type != "text" || !strings.Contains(a[0].Text, `vote({"agent_id":"agent9"`) || len(u) != 1 || u[0].Text != "agent9 has no answer." {
		t.Errorf("replay = %+v / %+v", a, u)
	}
}

func TestStyleOfModels(t *testing.T) {
	cases := map[string]thinkingStyle{
		"claude-opus-4-6":            thinkingAdaptive,
		"claude-sonnet-4-6":          thinkingAdaptive,
		"claude-opus-4-7":            thinkingAdaptive,
		"claude-mythos-preview":      thinkingAdaptive,
		"claude-sonnet-5":            thinkingAdaptive,
		"claude-opus-4-5-20251101":   thinkingBudget,
		"claude-haiku-4-5":           thinkingBudget,
		"claude-opus-4-1-20250805":   thinkingBudget,
		"claude-opus-4-20250514":     thinkingBudget,
		"claude-sonnet-4-0":          thinkingBudget,
		"claude-3-7-sonnet-20250219": thinkingBudget,
		"claude-3-5-sonnet-latest":   thinkingNone,
		"claude-3-haiku-20240307":    thinkingNone,
	}
	for model, want := range cases {
		if got := styleOf(model); got != want {
			t.Errorf("styleOf(%q) = %d, want %d", model, got, want)
		}
	}
}
