package openai

import (
	"errors"
	"net/http"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestQuirksPerModel(t *testing.T) {
	cases := []struct {
		backend, model, asked string
		effort                string
		noTemp, maxCompletion bool
		outside               bool
	}{
		{"openai", "gpt-5.4", "", "medium", true, true, false},
		{"openai", "gpt-5-chat-latest", "high", "", false, true, false},
		{"openai", "o3-mini", "low", "low", true, true, false},
		{"openai", "gpt-4.1", "high", "", false, true, false},
		{"openrouter", "openai/o4-mini", "", "medium", true, true, false},
		{"grok", "grok-3-mini-fast", "minimal", "low", false, true, true},
		{"grok", "grok-3-mini", "", "", false, true, true},
		{"grok", "grok-4.20-0309-reasoning", "high", "", false, true, true},
		{"deepseek", "deepseek-reasoner", "high", "", true, false, false},
		{"together", "openai/gpt-oss-120b", "high", "", false, false, false},
		{"ollama", "llama3.2", "", "", false, false, false},
	}
	for _, c := range cases {
		q := quirksFor(c.backend, c.model, "")
		if got := q.effortFor(c.asked); got != c.effort || q.noTemperature != c.noTemp ||
			q.maxCompletionTokens != c.maxCompletion || q.reasoningOutside != c.outside {
			t.Errorf("%s/%s asked %q: effort %q noTemp %v maxCompletion %v outside %v; want %q %v %v %v",
				c.backend, c.model, c.asked, got, q.noTemperature, q.maxCompletionTokens, q.reasoningOutside,
				c.effort, c.noTemp, c.maxCompletion, c.outside)
		}
	}
}

func TestRetryAfterHeaders(t *testing.T) {
	h := func(kv ...string) *http.Response {
		r := &http.Response{Header: http.Header{}}
		for i := 0; i < len(kv); i += 2 {
			r.Header.Set(kv[i], kv[i+1])
		}
		return r
	}
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		r    *http.Response
		min  time.Duration
		max  time.Duration
		name string
	}{
		{nil, 0, 0, "no response"},
		{h(), 0, 0, "no header"},
		{h("Retry-After", "3"), 3 * time.Second, 3 * time.Second, "seconds"},
		{h("Retry-After", "0.5"), 500 * time.Millisecond, 500 * time.Millisecond, "fractional seconds"},
		{h("Retry-After-Ms", "250", "Retry-After", "1"), 250 * time.Millisecond, 250 * time.Millisecond, "milliseconds first"},
		{h("Retry-After", date), 80 * time.Second, 91 * time.Second, "HTTP date"},
		{h("Retry-After", "soon"), 0, 0, "nonsense"},
	}
	for _, c := range cases {
		if got := retryAfter(c.r); got < c.min || got > c.max {
			t.Errorf("%s: %s, want between %s and %s", c.name, got, c.min, c.max)
		}
	}
}

func TestStreamErrorPayloads(t *testing.T) {
	c := &core{backend: "openrouter", model: "m", keyVar: "OPENROUTER_API_KEY"}
	cases := []struct {
		data   string
		class  providers.Class
		status int
	}{
		{`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded","param":null}}`, providers.ClassRateLimit, 429},
		{`{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, providers.ClassQuota, 429},
		{`{"error":{"message":"Provider returned error","code":502}}`, providers.ClassProvider, 502},
		{`{"error":{"message":"Overloaded","type":"overloaded_error"}}`, providers.ClassOverloaded, 503},
		{`{"error":{"message":"The server had an error","type":"server_error"}}`, providers.ClassProvider, 0},
		{`{"error":{"message":"Your prompt was flagged","code":"invalid_prompt"}}`, providers.ClassProvider, 400},
		{`{"error":"upstream went away"}`, providers.ClassProvider, 0},
		{`{"error":{"message":"bad key","type":"authentication_error"}}`, providers.ClassAuth, 401},
	}
	for _, tc := range cases {
		e := c.fromStream(parseStreamError([]byte(tc.data)), nil)
		if e.Class != tc.class || e.Status != tc.status {
			t.Errorf("%s: class %s status %d, want %s %d (%s)", tc.data, e.Class, e.Status, tc.class, tc.status, e.Message)
		}
	}
}

func TestFallbackOnlyWhenToolsAreUnsupported(t *testing.T) {
	api := func(status int, msg, param string) error {
		return &oai.Error{StatusCode: status, Message: msg, Param: param}
	}
	cases := []struct {
		name string
		from toolMode
		err  error
		to   toolMode
		ok   bool
	}{
		{"ollama model without tools", modeRequired, api(400, "registry.ollama.ai/library/gemma:2b does not support tools", ""), modeText, true},
		{"required refused", modeRequired, api(400, "Invalid value: 'required'. Supported values are: 'none' and 'auto'.", "tool_choice"), modeAuto, true},
		{"vllm without a tool parser", modeAuto, api(400, `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, ""), modeText, true},
		{"unknown field", modeRequired, api(422, "Unrecognized request argument supplied: tools", ""), modeText, true},
		{"broken conversation stays an error", modeRequired, api(400, "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", ""), modeRequired, false},
		{"context too long", modeRequired, api(400, "This model's maximum context length is 8192 tokens", ""), modeRequired, false},
		{"server error", modeRequired, api(500, "function tools are not supported right now", ""), modeRequired, false},
		{"already text", modeText, api(400, "does not support tools", ""), modeText, false},
		{"not an API error", modeRequired, errors.New("tools not supported"), modeRequired, false},
	}
	for _, c := range cases {
		if to, ok := fallbackMode(c.from, c.err); to != c.to || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.name, to, ok, c.to, c.ok)
		}
	}
}

func TestTextCallsReplayAsTheTextWritten(t *testing.T) {
	text := "My vote:\n```json\n{\"tool\": \"vote\", \"arguments\": {\"agent_id\": \"agent1\", \"reason\": \"r\"}}\n```"
	tools := []providers.Tool{{Name: providers.ToolVote}}
	a := finish(text, nil, tools)
	if len(a.Calls) != 1 || a.Calls[0].Name != "vote" {
		t.Fatalf("finish = %+v, want the vote read from the text", a)
	}
	if !replayAsText(a) || replayText(a) != text {
		t.Fatalf("replay = %q, want the text exactly as written", replayText(a))
	}
	if a := finish(`{"tool": "new_answer", "arguments": {"content": "x"}}`, nil, tools); len(a.Calls) != 0 {
		t.Fatalf("a call to a tool not offered was read: %+v", a)
	}
}
