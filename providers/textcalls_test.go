package providers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func argsOf(t *testing.T, c ToolCall) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(c.Args, &m); err != nil {
		t.Fatalf("arguments %s are not an object: %v", c.Args, err)
	}
	return m
}

func TestParseTextCalls(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		calls []string         // tool names, in order
		args  []map[string]any // expected arguments, per call (nil: not checked)
		rest  string           // expected Action.Text ("" not checked unless restSet)
	}{
		{name: "bare vote", text: `{"tool": "vote", "arguments": {"agent_id": "agent2", "reason": "clearest"}}`,
			calls: []string{"vote"}, args: []map[string]any{{"agent_id": "agent2", "reason": "clearest"}}},
		{name: "fenced json with prose around",
			text:  "I compared both.\n```json\n{\"tool\": \"new_answer\", \"arguments\": {\"content\": \"42\"}}\n```\nDone.",
			calls: []string{"new_answer"}, args: []map[string]any{{"content": "42"}}, rest: "I compared both.\n\nDone."},
		{name: "fence without language", text: "```\n{\"tool\":\"vote\",\"arguments\":{\"agent_id\":\"agent1\",\"reason\":\"r\"}}\n```",
			calls: []string{"vote"}},
		{name: "MassGen tool_name shape", text: `{"tool_name": "vote", "arguments": {"agent_id": "agent3", "reason": "x"}}`,
			calls: []string{"vote"}, args: []map[string]any{{"agent_id": "agent3", "reason": "x"}}},
		{name: "name and args keys", text: `{"name":"new_answer","args":{"content":"a"}}`, calls: []string{"new_answer"}},
		{name: "arguments as a JSON string", text: `{"tool": "vote", "arguments": "{\"agent_id\": \"agent1\", \"reason\": \"best\"}"}`,
			calls: []string{"vote"}, args: []map[string]any{{"agent_id": "agent1", "reason": "best"}}},
		{name: "arguments beside the name", text: `{"action": "vote", "agent_id": "agent2", "reason": "ok"}`,
			calls: []string{"vote"}, args: []map[string]any{{"agent_id": "agent2", "reason": "ok"}}},
		{name: "tool as the only key", text: `{"new_answer": {"content": "Paris"}}`,
			calls: []string{"new_answer"}, args: []map[string]any{{"content": "Paris"}}},
		{name: "null arguments", text: `{"tool": "vote", "arguments": null}`, calls: []string{"vote"}, args: []map[string]any{{}}},
		{name: "raw line breaks inside the content", text: "{\"tool\": \"new_answer\", \"arguments\": {\"content\": \"line one\nline two\"}}",
			calls: []string{"new_answer"}, args: []map[string]any{{"content": "line one\nline two"}}},
		{name: "braces and quotes inside strings", text: `{"tool":"new_answer","arguments":{"content":"use {x} and \"y\" }"}}`,
			calls: []string{"new_answer"}, args: []map[string]any{{"content": `use {x} and "y" }`}}},
		{name: "a call nested inside a wrapper", text: `{"response": {"tool": "vote", "arguments": {"agent_id": "agent1", "reason": "r"}}}`,
			calls: []string{"vote"}},
		{name: "an example call inside an answer stays inside", text: `{"tool":"new_answer","arguments":{"content":"reply with {\"tool\": \"vote\"}"}}`,
			calls: []string{"new_answer"}},
		{name: "two objects are two calls", text: "first {\"tool\":\"new_answer\",\"arguments\":{\"content\":\"a\"}} then {\"tool\":\"vote\",\"arguments\":{\"agent_id\":\"agent1\",\"reason\":\"b\"}}",
			calls: []string{"new_answer", "vote"}, rest: "first  then"},
		{name: "an array of calls", text: `[{"tool":"vote","arguments":{"agent_id":"agent1","reason":"a"}}, {"tool":"vote","arguments":{"agent_id":"agent2","reason":"b"}}]`,
			calls: []string{"vote", "vote"}},
		{name: "stray brace in prose before the call", text: "if x { y\n" + `{"tool":"vote","arguments":{"agent_id":"agent1","reason":"r"}}`,
			calls: []string{"vote"}},
		{name: "a quote in prose before the call", text: `it's "fine" {"tool":"vote","arguments":{"agent_id":"agent1","reason":"r"}}`,
			calls: []string{"vote"}},
		{name: "unknown tool is not a call", text: `{"tool": "search", "arguments": {"q": "x"}}`},
		{name: "plain JSON data is not a call", text: `The config is {"name": "server", "port": 8080}.`},
		{name: "no JSON at all", text: "I think agent2 is right."},
		{name: "broken JSON", text: `{"tool": "vote", "arguments": {"agent_id": "agent1",}`},
		{name: "arguments that are not an object are passed on", text: `{"tool":"vote","arguments":["agent1"]}`, calls: []string{"vote"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			act, ok := ParseTextCalls(tc.text)
			if ok != (len(tc.calls) > 0) {
				t.Fatalf("ok = %v with calls %+v", ok, act.Calls)
			}
			if !ok && act.Text != tc.text {
				t.Errorf("without calls the text must stay whole: %q", act.Text)
			}
			if len(act.Calls) != len(tc.calls) {
				t.Fatalf("calls %+v, want %v", act.Calls, tc.calls)
			}
			for i, c := range act.Calls {
				if c.Name != tc.calls[i] {
					t.Errorf("call %d is %s, want %s", i, c.Name, tc.calls[i])
				}
				if i < len(tc.args) {
					got := argsOf(t, c)
					want, _ := json.Marshal(tc.args[i])
					have, _ := json.Marshal(got)
					if string(want) != string(have) {
						t.Errorf("call %d arguments %s, want %s", i, have, want)
					}
				}
			}
			if tc.rest != "" && act.Text != tc.rest {
				t.Errorf("rest %q, want %q", act.Text, tc.rest)
			}
		})
	}
}

func TestParseTextCallsForOfferedToolsOnly(t *testing.T) {
	voteOnly := []Tool{{Name: ToolVote}}
	if _, ok := ParseTextCallsFor(`{"tool":"new_answer","arguments":{"content":"a"}}`, voteOnly); ok {
		t.Error("new_answer was not offered")
	}
	review := []Tool{{Name: "submit_plan"}}
	act, ok := ParseTextCallsFor(`{"tool":"submit_plan","arguments":{"plan":[]}}`, review)
	if !ok || act.Calls[0].Name != "submit_plan" {
		t.Errorf("got %+v", act)
	}
}

var workflowSchemas = []Tool{
	{Name: ToolNewAnswer, Description: "Submit a new answer to the task.",
		Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)},
	{Name: ToolVote, Description: "Vote for the best answer.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent2","agent3"]},"reason":{"type":"string"}},"required":["agent_id","reason"]}`)},
}

func TestToolsAsTextShowsTheReplyShapeAndEveryTool(t *testing.T) {
	text := ToolsAsText(workflowSchemas)
	for _, want := range []string{
		`{"tool": "<tool name>", "arguments": {<the tool's arguments>}}`,
		"### new_answer", "Submit a new answer", `"required":["content"]`,
		"### vote", `{"tool": "vote", "arguments": {"agent_id":"agent2","reason":"<why that answer is the best>"}}`,
		"```json", "exactly one JSON object",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("instructions lack %q:\n%s", want, text)
		}
	}
}

func TestEveryExampleParsesBackToItsTool(t *testing.T) {
	tools := append(workflowSchemas, Tool{Name: "submit_plan",
		Schema: json.RawMessage(`{"type":"object","properties":{"plan":{"type":"array"},"verdict":{"enum":["proceed","revise"]}},"required":["plan","verdict"]}`)})
	for _, tool := range tools {
		act, ok := ParseTextCallsFor(exampleCall(tool), tools)
		if !ok || len(act.Calls) != 1 || act.Calls[0].Name != tool.Name {
			t.Errorf("%s: example %s parsed as %+v", tool.Name, exampleCall(tool), act)
		}
	}
}

func FuzzParseTextCalls(f *testing.F) {
	for _, seed := range []string{
		`{"tool": "vote", "arguments": {"agent_id": "agent2", "reason": "x"}}`,
		"```json\n{\"tool_name\":\"new_answer\",\"arguments\":\"{\\\"content\\\":\\\"a\\\"}\"}\n```",
		`{"vote": {"agent_id": "agent1"}} {"action":"new_answer","content":"b"}`,
		"{\"tool\":\"new_answer\",\"arguments\":{\"content\":\"a\nb\"}}",
		`{{{{"tool":"vote"`, `}}}{`, `"\"{`, "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		act, ok := ParseTextCalls(text)
		if ok != (len(act.Calls) > 0) {
			t.Fatalf("ok %v with %d calls", ok, len(act.Calls))
		}
		for _, c := range act.Calls {
			if c.Name != ToolNewAnswer && c.Name != ToolVote {
				t.Fatalf("unknown tool %q", c.Name)
			}
			if !json.Valid(c.Args) {
				t.Fatalf("arguments %q are not JSON", c.Args)
			}
		}
	})
}

// A model's reply is untrusted text: braces by the thousand must not make
// parsing quadratic.
func TestParseTextCallsStaysFastOnHostileText(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("{", 100000),
		strings.Repeat(`{"{"`, 25000),
		strings.Repeat(`{"vote":`, 9000) + strings.Repeat("}", 9000),
		strings.Repeat(`{"a":`, 20000),
	} {
		start := time.Now()
		ParseTextCalls(text)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%d bytes took %s", len(text), d)
		}
	}
}
