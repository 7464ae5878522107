package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

func TestWorkflowCallsComeBackAsCalls(t *testing.T) {
	cases := []struct {
		name  string
		reply fake.Reply
		want  providers.ToolCall
	}{
		{"answer", fake.Reply{Kind: fake.ReplyNewAnswer, Content: "6 x 7 = 42.\nAnswer: 42"},
			providers.NewAnswerCall("6 x 7 = 42.\nAnswer: 42")},
		{"vote", fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "it is right"},
			providers.VoteCall("agent1", "it is right")},
	}
	for _, tg := range targets {
		for _, c := range cases {
			t.Run(tg.name+"/"+c.name, func(t *testing.T) {
				r := newRig(t)
				r.script.Add(tg.model, c.reply)
				act, _, err := r.open(t, tg).Step(context.Background(), stepRequest())
				if err != nil {
					t.Fatal(err)
				}
				if len(act.Calls) != 1 || act.Calls[0].Name != c.want.Name || !sameJSON(act.Calls[0].Args, c.want.Args) {
					t.Fatalf("calls = %s, want [%s %s]", show(act.Calls), c.want.Name, c.want.Args)
				}
				if calls := r.script.Calls(); len(calls) != 1 || calls[0].Format != tg.format || !calls[0].Stream {
					t.Fatalf("the fake saw %+v, want one streaming %s request", calls, tg.format)
				}
			})
		}
	}
}

func TestPlainTextWithoutACallIsText(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyText, Content: "I think the answer is 42, but let me reflect."})
			act, _, err := r.open(t, tg).Step(context.Background(), stepRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(act.Calls) != 0 || act.Text != "I think the answer is 42, but let me reflect." {
				t.Fatalf("action = %+v, want the text and no call", act)
			}
		})
	}
}

func TestJSONWrittenAsTextBecomesACall(t *testing.T) {
	text := "Here is my decision:\n```json\n{\"tool\": \"vote\", \"arguments\": {\"agent_id\": \"agent2\", \"reason\": \"clearest\"}}\n```"
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyText, Content: text})
			act, _, err := r.open(t, tg).Step(context.Background(), stepRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(act.Calls) != 1 || act.Calls[0].Name != "vote" || !sameJSON(act.Calls[0].Args, providers.VoteCall("agent2", "clearest").Args) {
				t.Fatalf("calls = %s, want the vote written in the text", show(act.Calls))
			}
		})
	}
}

func TestMalformedArgumentsComeBackRaw(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyMalformedArgs, Content: "cut short"})
			act, _, err := r.open(t, tg).Step(context.Background(), stepRequest())
			if err != nil {
				t.Fatalf("a malformed call is the model's problem, not an error: %v", err)
			}
			if len(act.Calls) != 1 || act.Calls[0].Name != "new_answer" || json.Valid(act.Calls[0].Args) ||
				string(act.Calls[0].Args) != `{"content": "cut short` {
				t.Fatalf("calls = %s, want new_answer with the raw arguments", show(act.Calls))
			}
		})
	}
}

func TestServerWithoutToolsGetsThemAsText(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model,
				fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorMessage: "registry.ollama.ai/library/gemma:2b does not support tools"},
				fake.Reply{Kind: fake.ReplyNewAnswer, Content: "42"}, // the fake writes it as JSON text: no tools offered
				fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "same"})
			p := r.open(t, tg)
			act, _, err := p.Step(context.Background(), stepRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(act.Calls) != 1 || !sameJSON(act.Calls[0].Args, providers.NewAnswerCall("42").Args) {
				t.Fatalf("action = %+v, want new_answer read from the text", act)
			}
			calls := r.script.Calls()
			if len(calls) != 2 || len(calls[0].Tools) != 2 || len(calls[1].Tools) != 0 {
				t.Fatalf("requests offered tools %v, want native tools then none", toolsSeen(calls))
			}
			b := r.lastBody(t)
			if _, ok := b["tool_choice"]; ok {
				t.Errorf("text mode still sends tool_choice")
			}
			if sys := systemText(tg, b); !strings.Contains(sys, "new_answer") || !strings.Contains(sys, "agent_id") ||
				!strings.HasPrefix(sys, stepRequest().System) {
				t.Errorf("system text does not describe the tools after the system message:\n%s", sys)
			}
			// The mode sticks: the next step goes straight to text.
			if _, _, err := p.Step(context.Background(), stepRequest()); err != nil {
				t.Fatal(err)
			}
			if calls := r.script.Calls(); len(calls) != 3 || len(calls[2].Tools) != 0 {
				t.Fatalf("requests offered tools %v, want the third in text mode", toolsSeen(calls))
			}
		})
	}
}

func TestRejectedToolChoiceFallsBackToAuto(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model,
				fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorMessage: "tool_choice 'required' is not supported by this model"},
				fake.Reply{Kind: fake.ReplyNewAnswer, Content: "42"})
			act, _, err := r.open(t, tg).Step(context.Background(), stepRequest())
			if err != nil || len(act.Calls) != 1 {
				t.Fatalf("Step = %+v, %v", act, err)
			}
			calls := r.script.Calls()
			if len(calls) != 2 || len(calls[1].Tools) != 2 || get(r.lastBody(t), "tool_choice") != "auto" {
				t.Fatalf("second request: tools %v, tool_choice %v; want both tools with tool_choice auto",
					toolsSeen(calls), get(r.lastBody(t), "tool_choice"))
			}
		})
	}
}

func TestTextToolsOption(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyText,
				Content: `{"name": "vote", "agent_id": "agent1", "reason": "best"}`})
			act, _, err := r.openWith(t, tg, openai.Options{TextTools: true}).Step(context.Background(), stepRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(act.Calls) != 1 || act.Calls[0].Name != "vote" {
				t.Fatalf("calls = %s, want the vote from the text", show(act.Calls))
			}
			b := r.lastBody(t)
			if b["tools"] != nil || b["tool_choice"] != nil {
				t.Fatalf("text mode sent tools %v / tool_choice %v", b["tools"], b["tool_choice"])
			}
		})
	}
}

func TestFaultsAreClassified(t *testing.T) {
	cases := []struct {
		name   string
		reply  fake.Reply
		class  providers.Class
		status int
		after  time.Duration
		says   []string // with %s for the key variable
	}{
		{"rate limit", fake.Reply{Kind: fake.ReplyStatus, Status: 429, RetryAfter: "2"},
			providers.ClassRateLimit, 429, 2 * time.Second, []string{"rate-limited", "retry after 2s"}},
		{"quota", fake.Reply{Kind: fake.ReplyStatus, Status: 429, ErrorCode: "insufficient_quota", RetryAfter: "30"},
			providers.ClassQuota, 429, 0, []string{"check the billing of the account behind %s"}},
		{"auth", fake.Reply{Kind: fake.ReplyStatus, Status: 401},
			providers.ClassAuth, 401, 0, []string{"check that %s holds a valid key"}},
		{"forbidden", fake.Reply{Kind: fake.ReplyStatus, Status: 403},
			providers.ClassAuth, 403, 0, []string{"%s"}},
		{"server error", fake.Reply{Kind: fake.ReplyStatus, Status: 500},
			providers.ClassProvider, 500, 0, []string{"HTTP 500"}},
		{"overloaded 529", fake.Reply{Kind: fake.ReplyStatus, Status: 529},
			providers.ClassOverloaded, 529, 0, []string{"overloaded"}},
		{"overloaded 503", fake.Reply{Kind: fake.ReplyStatus, Status: 503, RetryAfter: "1"},
			providers.ClassOverloaded, 503, time.Second, []string{"overloaded"}},
		{"bad request", fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorMessage: "context_length_exceeded: too long"},
			providers.ClassProvider, 400, 0, []string{"refused the request", "too long"}},
		{"server error mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 500},
			providers.ClassProvider, 0, 0, []string{"mid-reply"}},
		{"overload mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 529},
			providers.ClassOverloaded, 503, 0, []string{"mid-reply", "overloaded"}},
		{"rate limit mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 429},
			providers.ClassRateLimit, 429, 0, []string{"mid-reply"}},
		{"quota mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 429, ErrorType: "insufficient_quota"},
			providers.ClassQuota, 429, 0, []string{"billing"}},
		{"provider echoing the key", fake.Reply{Kind: fake.ReplyStatus, Status: 500, ErrorMessage: "bad header " + plantedKey},
			providers.ClassProvider, 500, 0, []string{"bad header"}},
	}
	for _, tg := range targets {
		for _, c := range cases {
			t.Run(tg.name+"/"+c.name, func(t *testing.T) {
				r := newRig(t)
				r.script.Add(tg.model, c.reply)
				_, u, err := r.open(t, tg).Step(context.Background(), stepRequest())
				var pe *providers.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v (%T), want a *providers.Error", err, err)
				}
				if pe.Class != c.class || pe.Status != c.status || pe.RetryAfter != c.after {
					t.Errorf("class %s status %d retry-after %s, want %s %d %s (%s)",
						pe.Class, pe.Status, pe.RetryAfter, c.class, c.status, c.after, pe.Message)
				}
				for _, s := range c.says {
					if s = strings.ReplaceAll(s, "%s", tg.keyVar); !strings.Contains(pe.Message, s) {
						t.Errorf("message %q does not say %q", pe.Message, s)
					}
				}
				t.Log(pe.Message)
				if u.CostUSD != nil {
					t.Errorf("usage has a cost; pricing belongs to another layer")
				}
				noKey(t, err)
				if n := len(r.script.Calls()); n != 1 {
					t.Errorf("the fake saw %d requests; the SDK must not retry (the resilience layer does)", n)
				}
			})
		}
	}
}

func TestLocalServerAuthErrorNamesNoKeyVariable(t *testing.T) {
	r := newRig(t)
	r.script.Add("qwen3", fake.Reply{Kind: fake.ReplyStatus, Status: 401})
	p, err := openai.NewChat(providers.Endpoint{Backend: "vllm", Model: "qwen3", BaseURL: r.srv.URL + "/v1", HTTPClient: r.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.Step(context.Background(), stepRequest())
	if providers.ClassOf(err) != providers.ClassAuth || !strings.Contains(err.Error(), "server's own access settings") {
		t.Fatalf("err = %v, want an auth error pointing at the server's settings", err)
	}
}

func TestStallTimesOutPromptly(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyStall})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, _, err := r.open(t, tg).Step(ctx, stepRequest())
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("Step returned after %s; a stalled stream must end with the deadline", d)
			}
			if providers.ClassOf(err) != providers.ClassTimeout || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want a timeout wrapping context.DeadlineExceeded", err)
			}
			noKey(t, err)
		})
	}
}

func TestCancelStopsTheStream(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyStall})
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for len(r.script.Calls()) == 0 {
					time.Sleep(5 * time.Millisecond)
				}
				time.Sleep(50 * time.Millisecond) // the first chunk is out
				cancel()
			}()
			done := make(chan error, 1)
			go func() {
				_, _, err := r.open(t, tg).Step(ctx, stepRequest())
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Step did not return after cancellation")
			}
		})
	}
}

func TestUsageIsNormalised(t *testing.T) {
	// Normalised: Input includes the cached part, Output the reasoning part.
	want := providers.Usage{Input: 1200, CachedInput: 1024, Output: 350, Reasoning: 200}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "42",
				Usage: &fake.Usage{Input: 1200, CachedInput: 1024, Output: 350, Reasoning: 200}})
			_, u, err := r.open(t, tg).Step(context.Background(), stepRequest())
			if err != nil {
				t.Fatal(err)
			}
			if u != want {
				t.Fatalf("usage = %+v, want %+v", u, want)
			}
		})
	}
}

func TestGrokReportsReasoningOutsideCompletionTokens(t *testing.T) {
	// The fake speaks xAI's dialect for grok models: completion_tokens 150,
	// reasoning_tokens 200 beside them. Both are output.
	r := newRig(t)
	tg := targets[2]
	r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "r",
		Usage: &fake.Usage{Input: 500, Output: 350, Reasoning: 200}})
	_, u, err := r.open(t, tg).Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if u.Output != 350 || u.Reasoning != 200 {
		t.Fatalf("usage = %+v, want output 350 (150 completion + 200 reasoning), reasoning 200", u)
	}
}

func TestAzureUsesTheDeploymentURLAndApiKeyHeader(t *testing.T) {
	r := newRig(t)
	tg := targets[3]
	r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "42"})
	if _, _, err := r.open(t, tg).Step(context.Background(), stepRequest()); err != nil {
		t.Fatal(err)
	}
	c := r.script.Calls()[0]
	if got := c.Header.Get("Api-Key"); got != plantedKey {
		t.Errorf("Api-Key header = %q, want the key", got)
	}
	if got := c.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q; Azure takes the key in Api-Key only", got)
	}
	if got := c.Header.Get("X-Seen-Url"); got != "/openai/deployments/gpt-4o-team/chat/completions?api-version=2024-10-21" {
		t.Fatalf("request went to %s, want /openai/deployments/gpt-4o-team/chat/completions?api-version=2024-10-21", got)
	}
}

func TestAzureRefusesPlainHTTPToAnotherHost(t *testing.T) {
	_, err := openai.NewChat(providers.Endpoint{Backend: "azure_openai", Model: "d", BaseURL: "http://example.com",
		APIKey: plantedKey, APIVersion: "2024-10-21"})
	if err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("err = %v, want a refusal to send the key over plain http", err)
	}
	noKey(t, err)
	_, err = openai.NewChat(providers.Endpoint{Backend: "azure_openai", Model: "d", BaseURL: "https://x.openai.azure.com", APIKey: plantedKey})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_VERSION") {
		t.Fatalf("err = %v, want a request for OPENAI_API_VERSION", err)
	}
}

func TestAmbientOpenAIVariablesNeverLeakIn(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-dummy-ambient-not-a-key-0000")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-ambient")
	t.Setenv("OPENAI_PROJECT_ID", "proj-ambient")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Ambient: yes")
	for _, tg := range []target{targets[0], targets[1], {name: "vllm", format: "chat", backend: "vllm", model: "qwen3"}} {
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			ep := r.endpoint(tg)
			if tg.backend == "vllm" {
				ep.APIKey = ""
			}
			var p providers.Provider
			var err error
			if tg.format == "responses" {
				p, err = openai.NewResponses(ep)
			} else {
				p, err = openai.NewChat(ep)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := p.Step(context.Background(), stepRequest()); err != nil {
				t.Fatalf("the request did not reach the fake: %v", err)
			}
			h := r.script.Calls()[0].Header
			wantAuth := "Bearer " + ep.APIKey
			if ep.APIKey == "" {
				wantAuth = ""
			}
			if got := h.Get("Authorization"); got != wantAuth {
				t.Errorf("Authorization = %q, want %q", got, wantAuth)
			}
			for _, k := range []string{"OpenAI-Organization", "OpenAI-Project", "X-Ambient"} {
				if v := h.Get(k); v != "" {
					t.Errorf("ambient header %s: %s leaked into the request", k, v)
				}
			}
		})
	}
}

func TestConstructorsRefuseAnEndpointWithoutModel(t *testing.T) {
	if _, err := openai.NewChat(providers.Endpoint{Backend: "groq"}); !errors.Is(err, providers.ErrBadSpec) {
		t.Errorf("NewChat without model: %v, want ErrBadSpec", err)
	}
	if _, err := openai.NewResponses(providers.Endpoint{Backend: "openai"}); !errors.Is(err, providers.ErrBadSpec) {
		t.Errorf("NewResponses without model: %v, want ErrBadSpec", err)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func show(calls []providers.ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString("[" + c.Name + " " + string(c.Args) + "]")
	}
	return b.String()
}

func toolsSeen(calls []fake.Call) [][]string {
	out := make([][]string, len(calls))
	for i, c := range calls {
		out[i] = c.Tools
	}
	return out
}

// systemText is the system message (chat) or the instructions (responses).
func systemText(tg target, body map[string]any) string {
	if tg.format == "responses" {
		s, _ := body["instructions"].(string)
		return s
	}
	s, _ := get(body, "messages", 0, "content").(string)
	return s
}

func TestCallsSharingAnIndexStayApart(t *testing.T) {
	// Older Ollama streams every tool call with index 0; a new id starts a
	// new call.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"new_answer","arguments":"{\"content\":\"42\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"vote","arguments":"{\"agent_id\":\"agent1\",\"reason\":\"r\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	}))
	defer srv.Close()
	p, err := openai.NewChat(providers.Endpoint{Backend: "ollama", Model: "llama3.2", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	act, _, err := p.Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 2 || act.Calls[0].Name != "new_answer" || act.Calls[1].Name != "vote" || !json.Valid(act.Calls[1].Args) {
		t.Fatalf("calls = %s, want new_answer then vote", show(act.Calls))
	}
}
