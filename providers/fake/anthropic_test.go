package fake_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

const anthropicVoteTools = `"tools":[{"name":"new_answer","input_schema":{"type":"object","properties":{"content":{"type":"string"}}}},
 {"name":"vote","input_schema":{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1","agent2"]},"reason":{"type":"string"}}}}]`

func anthropicPost(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", "test-key")
	req.Header.Set("anthropic-version", "2023-06-01")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return res, b.String()
}

func TestAnthropicStreamSpeaksTheWireFormat(t *testing.T) {
	script := fake.NewScript()
	script.Add("m", fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "a reason long enough to be cut into several \"pieces\" — ünïcode too",
		Usage: &fake.Usage{Input: 900, CachedInput: 500, CacheWrite: 300, Output: 40}})
	srv := httptest.NewServer(fake.NewAnthropic(script))
	defer srv.Close()
	res, body := anthropicPost(t, srv.URL+"/v1/messages",
		`{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}],`+anthropicVoteTools+`}`, nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var names []string
	var input strings.Builder
	var start, delta map[string]any
	frames := strings.Split(strings.TrimSpace(body), "\n\n")
	for _, f := range frames {
		lines := strings.Split(f, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("frame %q is not event: + data:", f)
		}
		name := strings.TrimPrefix(lines[0], "event: ")
		var data map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &data); err != nil || data["type"] != name {
			t.Fatalf("frame %q: data type %v, err %v", f, data["type"], err)
		}
		switch name {
		case "message_start":
			start = data["message"].(map[string]any)["usage"].(map[string]any)
		case "message_delta":
			delta = data
		case "content_block_delta":
			d := data["delta"].(map[string]any)
			if d["type"] == "input_json_delta" {
				input.WriteString(d["partial_json"].(string))
			}
		}
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	if got := strings.Join(names, ","); got != "message_start,ping,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop" {
		t.Errorf("events = %s", got)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(input.String()), &args); err != nil || args["agent_id"] != "agent2" {
		t.Errorf("input pieces join to %q (%v)", input.String(), err)
	}
	if start["input_tokens"] != 100.0 || start["cache_read_input_tokens"] != 500.0 || start["cache_creation_input_tokens"] != 300.0 {
		t.Errorf("message_start usage = %v, want uncached 100, read 500, written 300", start)
	}
	if delta["delta"].(map[string]any)["stop_reason"] != "tool_use" || delta["usage"].(map[string]any)["output_tokens"] != 40.0 {
		t.Errorf("message_delta = %v", delta)
	}
	calls := script.Calls()
	if len(calls) != 1 || !calls[0].Stream || calls[0].Model != "m" || strings.Join(calls[0].Tools, ",") != "new_answer,vote" ||
		strings.Join(calls[0].VoteEnum, ",") != "agent1,agent2" {
		t.Errorf("recorded %+v", calls)
	}
}

func TestAnthropicNonStreamingThroughTheSDK(t *testing.T) {
	script := fake.NewScript()
	script.Add("m",
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "391", Usage: &fake.Usage{Input: 50, CachedInput: 20, Output: 9}},
		fake.Reply{Kind: fake.ReplyStatus, Status: 429, RetryAfter: "3", ErrorCode: "enforced_spend_limit_reached"},
	)
	srv := httptest.NewServer(fake.NewAnthropic(script))
	defer srv.Close()
	// A base URL ending in /v1 reaches the fake too.
	client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL+"/v1"),
		option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	params := sdk.MessageNewParams{Model: "m", MaxTokens: 100,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("17*23?"))},
		Tools:    []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{Name: "new_answer", InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"content": map[string]any{"type": "string"}}}}}},
	}
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "new_answer" || string(msg.Content[0].Input) != `{"content":"391"}` {
		t.Errorf("content = %+v", msg.Content)
	}
	if u := msg.Usage; u.InputTokens != 30 || u.CacheReadInputTokens != 20 || u.OutputTokens != 9 || msg.StopReason != "tool_use" {
		t.Errorf("usage %+v, stop %q", u, msg.StopReason)
	}
	_, err = client.Messages.New(context.Background(), params)
	var ae *sdk.Error
	if !strings.Contains(err.Error(), "enforced_spend_limit_reached") || !asAnthropic(err, &ae) || ae.StatusCode != 429 ||
		ae.Type() != "rate_limit_error" || ae.Response.Header.Get("retry-after") != "3" {
		t.Errorf("err = %v", err)
	}
}

func asAnthropic(err error, target **sdk.Error) bool {
	e, ok := err.(*sdk.Error)
	*target = e
	return ok
}

func TestAnthropicRejectsWhatTheAPIRejects(t *testing.T) {
	user := `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	useVote := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"vote","input":{}}]}`
	result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"no","is_error":true}]}`
	cases := []struct {
		name, body string
		header     map[string]string
		status     int
		says       string
	}{
		{"no key", `{"model":"m","max_tokens":5,"messages":[` + user + `]}`, map[string]string{"x-api-key": ""}, 401, "x-api-key"},
		{"no version", `{"model":"m","max_tokens":5,"messages":[` + user + `]}`, map[string]string{"anthropic-version": ""}, 400, "anthropic-version"},
		{"no max_tokens", `{"model":"m","messages":[` + user + `]}`, nil, 400, "max_tokens"},
		{"empty text", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, nil, 400, "non-empty"},
		{"tool_use unanswered", `{"model":"m","max_tokens":5,"messages":[` + user + `,` + useVote + `,` + user + `]}`, nil, 400, "without `tool_result`"},
		{"stray tool_result", `{"model":"m","max_tokens":5,"messages":[` + user + `,{"role":"assistant","content":"ok"},` + result + `]}`, nil, 400, "unexpected `tool_use_id`"},
		{"five breakpoints", `{"model":"m","max_tokens":5,"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}},{"type":"text","text":"c","cache_control":{"type":"ephemeral"}},{"type":"text","text":"d","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"e","cache_control":{"type":"ephemeral"}}]}]}`, nil, 400, "maximum of 4"},
		{"thinking forces no tool", `{"model":"m","max_tokens":5,"thinking":{"type":"adaptive"},"tool_choice":{"type":"any"},"messages":[` + user + `],` + anthropicVoteTools + `}`, nil, 400, "forces tool use"},
		{"thinking with temperature", `{"model":"m","max_tokens":5,"thinking":{"type":"adaptive"},"temperature":0.5,"messages":[` + user + `]}`, nil, 400, "temperature"},
		{"budget over max_tokens", `{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[` + user + `]}`, nil, 400, "budget_tokens"},
		{"thinking tool loop without thinking block", `{"model":"m","max_tokens":5,"thinking":{"type":"adaptive"},"messages":[` + user + `,` + useVote + `,` + result + `],` + anthropicVoteTools + `}`, nil, 400, "must start with a thinking block"},
		{"tool_choice names no tool", `{"model":"m","max_tokens":5,"tool_choice":{"type":"tool","name":"shout"},"messages":[` + user + `],` + anthropicVoteTools + `}`, nil, 400, "shout"},
		{"unknown path", ``, nil, 404, "not_found"},
	}
	script := fake.NewScript()
	srv := httptest.NewServer(fake.NewAnthropic(script))
	defer srv.Close()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := srv.URL + "/v1/messages"
			if c.status == 404 {
				url = srv.URL + "/v1/complete"
			}
			res, body := anthropicPost(t, url, c.body, c.header)
			var env struct {
				Type  string
				Error struct{ Type, Message string }
			}
			_ = json.Unmarshal([]byte(body), &env)
			if res.StatusCode != c.status || env.Type != "error" || !strings.Contains(env.Error.Message+env.Error.Type, c.says) {
				t.Errorf("status %d body %s; want %d saying %q", res.StatusCode, body, c.status, c.says)
			}
		})
	}
	if n := len(script.Calls()); n != 0 {
		t.Errorf("%d refused requests consumed replies", n)
	}
	// The valid form of the tool loop passes.
	res, body := anthropicPost(t, srv.URL+"/v1/messages", `{"model":"m","max_tokens":5,"messages":[`+user+`,`+useVote+`,`+result+`],`+anthropicVoteTools+`}`, nil)
	if res.StatusCode != 200 {
		t.Errorf("a valid tool loop got %d: %s", res.StatusCode, body)
	}
}

func TestAnthropicStallHoldsUntilTheClientLeaves(t *testing.T) {
	script := fake.NewScript()
	script.Always("m", fake.Reply{Kind: fake.ReplyStall})
	done := make(chan struct{}, 2)
	h := fake.NewAnthropic(script)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		done <- struct{}{}
	}))
	defer srv.Close()
	for _, stream := range []string{"true", "false"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":5,"stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-api-key", "k")
		req.Header.Set("anthropic-version", "2023-06-01")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			// Streaming: headers and message_start came; the body then stalls.
			_, err = bufio.NewReader(res.Body).ReadString(0)
			res.Body.Close()
		}
		cancel()
		if err == nil {
			t.Errorf("stream=%s: the stall ended on its own", stream)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second): // never, unless it leaked; generous for a loaded machine
			t.Errorf("stream=%s: the handler outlived its client", stream)
		}
	}
}
