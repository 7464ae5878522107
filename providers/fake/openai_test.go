package fake_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/fake"
)

const chatTools = `[{"type":"function","function":{"name":"new_answer","parameters":{"type":"object","properties":{"content":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"vote","parameters":{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1","agent3"]},"reason":{"type":"string"}}}}}]`

const respTools = `[{"type":"function","name":"new_answer","strict":false,"parameters":{"type":"object","properties":{"content":{"type":"string"}}}},` +
	`{"type":"function","name":"vote","strict":false,"parameters":{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent2"]},"reason":{"type":"string"}}}}]`

func serve(t *testing.T, s *fake.Script) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(fake.NewOpenAI(s))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-dummy-test-not-a-key-0000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sse reads a stream into its events: the event line (if any) and the data.
type sseEvent struct{ event, data string }

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func TestChatStreamIsOpenAIsWireFormat(t *testing.T) {
	s := fake.NewScript()
	s.Add("gpt-4.1", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "The answer is 42, as computed.",
		Usage: &fake.Usage{Input: 90, CachedInput: 64, Output: 20, Reasoning: 5}})
	srv := serve(t, s)
	resp := post(t, srv.URL+"/v1/chat/completions",
		`{"model":"gpt-4.1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"q"}],"tools":`+chatTools+`}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	events := readSSE(t, resp.Body)
	if last := events[len(events)-1]; last.data != "[DONE]" || last.event != "" {
		t.Fatalf("last event %+v, want data: [DONE]", last)
	}
	var args strings.Builder
	var id, name, finish string
	var usage map[string]any
	for i, e := range events[:len(events)-1] {
		if e.event != "" {
			t.Errorf("chat streams send data lines only; got event %q", e.event)
		}
		var ch struct {
			Object  string          `json:"object"`
			Usage   json.RawMessage `json:"usage"`
			Error   json.RawMessage `json:"error"`
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    *int   `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e.data), &ch); err != nil {
			t.Fatal(err)
		}
		if ch.Error != nil || strings.Contains(e.data, `"error"`) {
			t.Fatalf("chunk %d carries an error key: %s", i, e.data)
		}
		if ch.Object != "chat.completion.chunk" {
			t.Errorf("object %q", ch.Object)
		}
		if len(ch.Choices) == 0 {
			if i != len(events)-2 {
				t.Errorf("the usage chunk (choices: []) must come last before [DONE]")
			}
			_ = json.Unmarshal(ch.Usage, &usage)
			continue
		}
		if string(ch.Usage) != "null" {
			t.Errorf("chunk %d: usage %s, want null before the last chunk", i, ch.Usage)
		}
		for _, tc := range ch.Choices[0].Delta.ToolCalls {
			if tc.Index == nil || *tc.Index != 0 {
				t.Errorf("tool-call delta without index 0: %s", e.data)
			}
			if tc.ID != "" {
				if id != "" {
					t.Errorf("the id came twice")
				}
				id, name = tc.ID, tc.Function.Name
			}
			args.WriteString(tc.Function.Arguments)
		}
		if f := ch.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if id == "" || name != "new_answer" || args.String() != `{"content":"The answer is 42, as computed."}` || finish != "tool_calls" {
		t.Fatalf("reassembled call %q %q %q finish %q", id, name, args.String(), finish)
	}
	want := map[string]any{"prompt_tokens": 90.0, "completion_tokens": 20.0, "total_tokens": 110.0,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 64.0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 5.0}}
	if !reflect.DeepEqual(usage, want) {
		t.Fatalf("usage %v, want %v", usage, want)
	}
	c := s.Calls()[0]
	if c.Format != "chat" || c.Model != "gpt-4.1" || !c.Stream || !reflect.DeepEqual(c.Tools, []string{"new_answer", "vote"}) ||
		!reflect.DeepEqual(c.VoteEnum, []string{"agent1", "agent3"}) || c.Header.Get("Authorization") == "" {
		t.Fatalf("recorded call %+v", c)
	}
}

func TestChatWithoutIncludeUsageSendsNoUsageChunk(t *testing.T) {
	s := fake.NewScript()
	s.Add("m", fake.Reply{Kind: fake.ReplyText, Content: "hello there"})
	srv := serve(t, s)
	events := readSSE(t, post(t, srv.URL+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}`).Body)
	var text strings.Builder
	for _, e := range events {
		if strings.Contains(e.data, `"usage"`) || strings.Contains(e.data, `"choices":[]`) {
			t.Errorf("usage sent without include_usage: %s", e.data)
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(e.data), &ch) == nil && len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if text.String() != "hello there" {
		t.Fatalf("text %q", text.String())
	}
}

func TestChatWholeResponse(t *testing.T) {
	s := fake.NewScript()
	srv := serve(t, s)
	// No script: the default policy votes for the first name offered.
	resp := post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}],"tools":`+chatTools+`}`)
	var body struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	m := body.Choices[0].Message
	if body.Object != "chat.completion" || m.Content != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "vote" ||
		!strings.Contains(m.ToolCalls[0].Function.Arguments, `"agent1"`) || body.Choices[0].FinishReason != "tool_calls" || body.Usage.PromptTokens == 0 {
		t.Fatalf("response %+v", body)
	}
}

func TestResponsesStreamIsOpenAIsWireFormat(t *testing.T) {
	for _, kind := range []string{fake.ReplyVote, fake.ReplyText} {
		t.Run(kind, func(t *testing.T) {
			s := fake.NewScript()
			s.Add("gpt-5-mini", fake.Reply{Kind: kind, Agent: "agent2", Reason: "best", Content: "plain words here",
				Usage: &fake.Usage{Input: 81, CachedInput: 10, Output: 40, Reasoning: 22}})
			srv := serve(t, s)
			events := readSSE(t, post(t, srv.URL+"/v1/responses",
				`{"model":"gpt-5-mini","stream":true,"input":[{"role":"user","content":"q"}],"tools":`+respTools+`}`).Body)
			var types []string
			for i, e := range events {
				var ev map[string]json.RawMessage
				if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				var typ string
				var seq int
				_ = json.Unmarshal(ev["type"], &typ)
				_ = json.Unmarshal(ev["sequence_number"], &seq)
				if typ != e.event || seq != i {
					t.Errorf("event %d: event line %q, data type %q, sequence %d", i, e.event, typ, seq)
				}
				if _, ok := ev["error"]; ok {
					t.Errorf("event %s has a top-level error key", typ)
				}
				types = append(types, typ)
			}
			if types[0] != "response.created" || types[len(types)-1] != "response.completed" {
				t.Fatalf("events %v", types)
			}
			must := map[string][]string{
				fake.ReplyVote: {"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done"},
				fake.ReplyText: {"response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done"},
			}[kind]
			for _, m := range must {
				if !contains(types, m) {
					t.Errorf("no %s in %v", m, types)
				}
			}
			var done struct {
				Response struct {
					Output []struct {
						Type      string `json:"type"`
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"output"`
					Usage map[string]any `json:"usage"`
				} `json:"response"`
			}
			_ = json.Unmarshal([]byte(events[len(events)-1].data), &done)
			out := done.Response.Output
			if out[0].Type != "reasoning" {
				t.Errorf("reasoning tokens without a reasoning item: %+v", out)
			}
			if kind == fake.ReplyVote && (out[1].Type != "function_call" || out[1].Name != "vote" || !strings.Contains(out[1].Arguments, "agent2")) {
				t.Errorf("output %+v", out)
			}
			want := map[string]any{"input_tokens": 81.0, "input_tokens_details": map[string]any{"cached_tokens": 10.0},
				"output_tokens": 40.0, "output_tokens_details": map[string]any{"reasoning_tokens": 22.0}, "total_tokens": 121.0}
			if !reflect.DeepEqual(done.Response.Usage, want) {
				t.Errorf("usage %v, want %v", done.Response.Usage, want)
			}
			if c := s.Calls()[0]; c.Format != "responses" || !reflect.DeepEqual(c.VoteEnum, []string{"agent2"}) {
				t.Errorf("recorded %+v", c)
			}
		})
	}
}

func TestStreamErrorsAndStatuses(t *testing.T) {
	s := fake.NewScript()
	s.Add("m",
		fake.Reply{Kind: fake.ReplyStatus, Status: 429, RetryAfter: "7"},
		fake.Reply{Kind: fake.ReplyStreamError, Status: 500},
		fake.Reply{Kind: fake.ReplyStreamError, Status: 500},
		fake.Reply{Kind: fake.ReplyStreamError, Status: 429})
	srv := serve(t, s)

	resp := post(t, srv.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}`)
	var body struct {
		Error struct {
			Message, Type string
			Code          *string
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || body.Error.Code == nil || *body.Error.Code != "rate_limit_exceeded" {
		t.Fatalf("status %d Retry-After %q body %+v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	events := readSSE(t, post(t, srv.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}`).Body)
	last := events[len(events)-1].data
	if !strings.HasPrefix(last, `{"error":{`) || contains([]string{last}, "[DONE]") {
		t.Fatalf("chat stream error ends with %s", last)
	}

	events = readSSE(t, post(t, srv.URL+"/v1/responses", `{"model":"m","stream":true,"input":"q"}`).Body)
	if last := events[len(events)-1]; last.event != "response.failed" || !strings.Contains(last.data, `"status":"failed"`) {
		t.Fatalf("responses server error ends with %+v", last)
	}
	events = readSSE(t, post(t, srv.URL+"/v1/responses", `{"model":"m","stream":true,"input":"q"}`).Body)
	if last := events[len(events)-1]; last.event != "error" || !strings.Contains(last.data, `"code":"rate_limit_exceeded"`) {
		t.Fatalf("responses rate limit ends with %+v", last)
	}
}

func TestRoutesTolerateEveryBaseURL(t *testing.T) {
	srv := serve(t, fake.NewScript())
	for path, status := range map[string]int{
		"/chat/completions":                           200,
		"/v1/chat/completions":                        200,
		"/openai/deployments/gpt-4o/chat/completions": 200,
		"/responses":                                  200,
		"/v1/responses/":                              200,
		"/v1/embeddings":                              404,
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"q"}],"input":"q"}`
		if got := post(t, srv.URL+path, body).StatusCode; got != status {
			t.Errorf("%s: %d, want %d", path, got, status)
		}
	}
}

func TestConversationRulesAreEnforced(t *testing.T) {
	srv := serve(t, fake.NewScript())
	bad := map[string]string{
		"/v1/chat/completions": `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"tool","tool_call_id":"x","content":"p"}]}`,
		"/v1/responses":        `{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"x","output":"p"}]}`,
	}
	for path, body := range bad {
		if got := post(t, srv.URL+path, body).StatusCode; got != 400 {
			t.Errorf("%s: %d for an output without its call, want 400", path, got)
		}
	}
	unanswered := `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"vote","arguments":"{}"}}]},{"role":"user","content":"next"}]}`
	if got := post(t, srv.URL+"/v1/chat/completions", unanswered).StatusCode; got != 400 {
		t.Errorf("an unanswered tool call: %d, want 400", got)
	}
	if got := post(t, srv.URL+"/v1/chat/completions", `{"model":"m","tool_choice":"required","messages":[{"role":"user","content":"q"}]}`).StatusCode; got != 400 {
		t.Errorf("tool_choice without tools: %d, want 400", got)
	}
}

func TestCallsBecomeJSONTextWhenNoToolsAreOffered(t *testing.T) {
	s := fake.NewScript()
	s.Add("m", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "42"})
	srv := serve(t, s)
	var body struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	_ = json.NewDecoder(post(t, srv.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`).Body).Decode(&body)
	if got := body.Choices[0].Message.Content; got != `{"tool": "new_answer", "arguments": {"content":"42"}}` {
		t.Fatalf("content %q", got)
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
