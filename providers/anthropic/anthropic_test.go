package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// plantedKey is a key-shaped secret no error may ever show.
const plantedKey = "dummy.PLANTED.anthropic.0123456789"

const testModel = "claude-sonnet-4-5-20250929"

var (
	answerTool = providers.Tool{Name: providers.ToolNewAnswer, Description: "Give your answer to the task.",
		Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string","description":"the whole answer"}},"required":["content"]}`)}
	voteTool = providers.Tool{Name: providers.ToolVote, Description: "Vote for the best answer shown.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1","agent2"]},"reason":{"type":"string"}},"required":["agent_id","reason"]}`)}
)

const (
	testSystem = "You are one agent of a team. Answer with new_answer or vote for the best answer shown.\nPersona: a careful arithmetician."
	testPrefix = "Task: What is 17 * 23?\n\nCriteria: the exact product.\n\n"
	testShown  = "<answers>\n<answer agent=\"agent1\" label=\"agent1.1\">391</answer>\n<answer agent=\"agent2\" label=\"agent2.1\">381</answer>\n</answers>\n"
)

// stepRequest is a later step: both tools, two answers shown.
func stepRequest() providers.Request {
	return providers.Request{
		Purpose:      providers.PurposeStep,
		System:       testSystem,
		Prompt:       testPrefix + testShown,
		StablePrefix: testPrefix,
		Tools:        []providers.Tool{answerTool, voteTool},
		Task:         "What is 17 * 23?",
		VoteEnum:     []string{"agent1", "agent2"},
	}
}

// fakeServer serves the Anthropic fake; it counts requests and notes when
// a handler returns (a stalled one returns only once the client is gone).
type fakeServer struct {
	*httptest.Server
	script   *fake.Script
	requests atomic.Int64
	finished chan struct{}
}

func newFake(t testing.TB) *fakeServer {
	t.Helper()
	f := &fakeServer{script: fake.NewScript(), finished: make(chan struct{}, 64)}
	h := fake.NewAnthropic(f.script)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		h.ServeHTTP(w, r)
		select {
		case f.finished <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) provider(t testing.TB, model string) *Provider {
	t.Helper()
	return open(t, providers.Endpoint{Backend: "claude", Model: model, BaseURL: f.URL, APIKey: plantedKey, HTTPClient: f.Client()})
}

func open(t testing.TB, ep providers.Endpoint) *Provider {
	t.Helper()
	p, err := New(ep)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*Provider)
}

// body is the last request the fake recorded, decoded.
func (f *fakeServer) body(t *testing.T) map[string]any {
	t.Helper()
	calls := f.script.Calls()
	if len(calls) == 0 {
		t.Fatal("the fake recorded no call")
	}
	var m map[string]any
	if err := json.Unmarshal(calls[len(calls)-1].Body, &m); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return m
}

func args(t *testing.T, c providers.ToolCall) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(c.Args, &m); err != nil {
		t.Fatalf("arguments %s: %v", c.Args, err)
	}
	return m
}

func TestAnswerArrivesAsNewAnswerCall(t *testing.T) {
	f := newFake(t)
	content := "17 × 23 = 391 — \"exactly\" <b>&</b> 😀\nAnswer: 391"
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyNewAnswer, Content: content})
	act, _, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("calls = %+v, want one new_answer", act.Calls)
	}
	if got := args(t, act.Calls[0])["content"]; got != content {
		t.Errorf("content = %q, want %q", got, content)
	}
	calls := f.script.Calls()
	if !calls[0].Stream || calls[0].Header.Get("X-Api-Key") != plantedKey || calls[0].Header.Get("Anthropic-Version") == "" {
		t.Errorf("request: stream=%v, key sent=%v, version=%q", calls[0].Stream,
			calls[0].Header.Get("X-Api-Key") == plantedKey, calls[0].Header.Get("Anthropic-Version"))
	}
}

func TestVoteArrivesAsVoteCall(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "391 is 17 × 23; 381 is off by ten."})
	act, _, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote {
		t.Fatalf("calls = %+v, want one vote", act.Calls)
	}
	if a := args(t, act.Calls[0]); a["agent_id"] != "agent1" || !strings.Contains(a["reason"], "off by ten") {
		t.Errorf("vote args = %v", a)
	}
	if got := f.script.Calls()[0].VoteEnum; strings.Join(got, ",") != "agent1,agent2" {
		t.Errorf("the fake read the vote enum as %v", got)
	}
}

func TestDefaultReplyVotesWhenVotingIsOffered(t *testing.T) {
	f := newFake(t)
	act, _, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || args(t, act.Calls[0])["agent_id"] != "agent1" {
		t.Fatalf("calls = %+v, want the default vote for agent1", act.Calls)
	}
}

func TestTextReplyFallsBackToCallsWrittenInText(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel,
		fake.Reply{Kind: fake.ReplyText, Content: "Both answers were checked.\n```json\n{\"name\": \"vote\", \"arguments\": {\"agent_id\": \"agent1\", \"reason\": \"391 is right\"}}\n```"},
		fake.Reply{Kind: fake.ReplyText, Content: "I think the answer is 391."},
	)
	p := f.provider(t, testModel)
	act, _, err := p.Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || args(t, act.Calls[0])["agent_id"] != "agent1" {
		t.Fatalf("calls = %+v, want the vote written in the text", act.Calls)
	}
	if !strings.Contains(act.Text, "Both answers were checked") {
		t.Errorf("text = %q, want the prose kept", act.Text)
	}
	act, _, err = p.Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 0 || act.Text != "I think the answer is 391." {
		t.Errorf("plain prose gave %+v, want no calls and the text", act)
	}
}

func TestMalformedToolInputComesBackRaw(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyMalformedArgs})
	act, _, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
	if err != nil {
		t.Fatalf("a malformed call is the model's mistake, not a failed call: %v", err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("calls = %+v", act.Calls)
	}
	if raw := string(act.Calls[0].Args); json.Valid(act.Calls[0].Args) || !strings.HasPrefix(raw, `{"content": "an answer`) {
		t.Errorf("args = %q, want the broken JSON as sent", raw)
	}
}

func TestFaultsAreClassified(t *testing.T) {
	cases := []struct {
		name       string
		reply      fake.Reply
		class      providers.Class
		status     int
		retryAfter time.Duration
		says       string
	}{
		{"429 rate limit with retry-after", fake.Reply{Kind: fake.ReplyStatus, Status: 429, RetryAfter: "7"},
			providers.ClassRateLimit, 429, 7 * time.Second, "rate_limit_error"},
		{"529 overloaded", fake.Reply{Kind: fake.ReplyStatus, Status: 529, RetryAfter: "2"},
			providers.ClassOverloaded, 529, 2 * time.Second, "overloaded_error"},
		{"overloaded mid-stream", fake.Reply{Kind: fake.ReplyStreamError},
			providers.ClassOverloaded, 529, 0, "middle of the stream"},
		{"api_error mid-stream", fake.Reply{Kind: fake.ReplyStreamError, ErrorType: "api_error", ErrorMessage: "Internal server error"},
			providers.ClassProvider, 500, 0, "api_error"},
		{"401 bad key", fake.Reply{Kind: fake.ReplyStatus, Status: 401},
			providers.ClassAuth, 401, 0, "ANTHROPIC_API_KEY"},
		{"403 no permission", fake.Reply{Kind: fake.ReplyStatus, Status: 403},
			providers.ClassAuth, 403, 0, "ANTHROPIC_API_KEY"},
		{"credit balance too low", fake.Reply{Kind: fake.ReplyStatus, Status: 400,
			ErrorMessage: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},
			providers.ClassQuota, 400, 0, "billing"},
		{"usage limits reached", fake.Reply{Kind: fake.ReplyStatus, Status: 400,
			ErrorMessage: "You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."},
			providers.ClassQuota, 400, 0, "retrying will not help"},
		{"402 billing_error", fake.Reply{Kind: fake.ReplyStatus, Status: 402},
			providers.ClassQuota, 402, 0, "billing"},
		{"429 spend limit", fake.Reply{Kind: fake.ReplyStatus, Status: 429, ErrorCode: "enforced_spend_limit_reached",
			ErrorMessage: "This request would exceed your organization's monthly spend limit."},
			providers.ClassQuota, 429, 0, "billing"},
		{"500", fake.Reply{Kind: fake.ReplyStatus, Status: 500},
			providers.ClassProvider, 500, 0, "api_error"},
		{"400 bad request", fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorMessage: "messages: roles must alternate"},
			providers.ClassProvider, 400, 0, "roles must alternate"},
		{"404 unknown model", fake.Reply{Kind: fake.ReplyStatus, Status: 404, ErrorMessage: "model: claude-nope"},
			providers.ClassProvider, 404, 0, "check the model name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.script.Add(testModel, c.reply)
			act, _, err := f.provider(t, testModel).Step(context.Background(), stepRequest())
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *providers.Error", err, err)
			}
			if pe.Class != c.class || pe.Status != c.status || pe.RetryAfter != c.retryAfter {
				t.Errorf("class %s status %d retry-after %v, want %s %d %v", pe.Class, pe.Status, pe.RetryAfter, c.class, c.status, c.retryAfter)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("message %q does not say %q", err, c.says)
			}
			if len(act.Calls) != 0 {
				t.Errorf("a failed call returned calls %+v", act.Calls)
			}
			if n := f.requests.Load(); n != 1 {
				t.Errorf("%d HTTP requests, want 1: SDK retries must be off", n)
			}
		})
	}
}

func TestStallEndsAtTheDeadlinePromptly(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyStall})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := f.provider(t, testModel).Step(ctx, stepRequest())
	if took := time.Since(start); took > 10*time.Second { // the stall never ends: any bound catches a missed cancel
		t.Errorf("returned after %v, want right after the 150ms deadline", took)
	}
	if providers.ClassOf(err) != providers.ClassTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout wrapping context.DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "deadline") {
		t.Errorf("message %q does not mention the deadline", err)
	}
	select {
	case <-f.finished:
	case <-time.After(10 * time.Second): // never, unless it leaked; generous for a loaded machine
		t.Error("the server still holds the request: the connection was not closed")
	}
}

func TestCancelMidStreamStopsTheRequest(t *testing.T) {
	f := newFake(t)
	// message_start arrives, then nothing: the call is mid-stream when cancelled.
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyStall})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(f.script.Calls()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	_, _, err := f.provider(t, testModel).Step(ctx, stepRequest())
	if took := time.Since(start); took > 10*time.Second { // the stall never ends: any bound catches a missed cancel
		t.Errorf("returned %v after the start, want right after the cancel", took)
	}
	if providers.ClassOf(err) != providers.ClassTimeout || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a timeout-class error wrapping context.Canceled", err)
	}
	select {
	case <-f.finished:
	case <-time.After(10 * time.Second): // never, unless it leaked; generous for a loaded machine
		t.Error("the server never saw the client go away")
	}
}

func TestUsageIsNormalised(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "r",
		Usage: &fake.Usage{Input: 5000, CachedInput: 3000, CacheWrite: 1500, Output: 120, Reasoning: 40}})
	r, err := f.provider(t, testModel).Call(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{Input: 5000, CachedInput: 3000, Output: 120, Reasoning: 40}
	if u := r.Usage; u.Input != want.Input || u.CachedInput != want.CachedInput || u.Output != want.Output || u.Reasoning != want.Reasoning {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
	if r.CacheWriteInput != 1500 || r.CacheWrite1hInput != 0 || r.StopReason != "tool_use" {
		t.Errorf("cache writes %d (1h %d), stop %q; want 1500 (0), tool_use", r.CacheWriteInput, r.CacheWrite1hInput, r.StopReason)
	}
	// The writes cost more than input, which Usage cannot say, so this call
	// comes priced; one without writes is left for the pricing layer.
	want5m := pricing.CostWithCacheWrites("claude", testModel, r.Usage, 1500, 0)
	if r.Usage.CostUSD == nil || want5m == nil || *r.Usage.CostUSD != *want5m || *want5m <= *pricing.Cost("claude", testModel, r.Usage) {
		t.Errorf("cost = %v, want %v (above the cost at the input rate)", r.Usage.CostUSD, want5m)
	}
	f.script.Add(testModel, fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "r", Usage: &fake.Usage{Input: 5000, CachedInput: 3000, Output: 120}})
	if _, u, err := f.provider(t, testModel).Step(context.Background(), stepRequest()); err != nil || u.CostUSD != nil {
		t.Errorf("without cache writes: err %v, cost %v; want nil for pricing to fill", err, u.CostUSD)
	}
}

func TestRepeatedStepsReportCacheReads(t *testing.T) {
	f := newFake(t)
	f.script.Add(testModel,
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "391", Usage: &fake.Usage{Input: 2100, CacheWrite: 1800, Output: 30}},
		fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "r", Usage: &fake.Usage{Input: 2300, CachedInput: 1800, Output: 25}},
	)
	p := f.provider(t, testModel)
	first, err := p.Call(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.Call(context.Background(), stepRequest())
	if err != nil {
		t.Fatal(err)
	}
	if first.CacheWriteInput != 1800 || first.Usage.CachedInput != 0 || second.Usage.CachedInput != 1800 || second.Usage.Input != 2300 {
		t.Errorf("first %+v (writes %d), second %+v", first.Usage, first.CacheWriteInput, second.Usage)
	}
	// The cached part of both requests is the same bytes.
	var bodies [2]struct {
		System   json.RawMessage
		Messages []struct{ Content []json.RawMessage }
	}
	for i, c := range f.script.Calls() {
		if err := json.Unmarshal(c.Body, &bodies[i]); err != nil {
			t.Fatal(err)
		}
	}
	if string(bodies[0].System) != string(bodies[1].System) || string(bodies[0].Messages[0].Content[0]) != string(bodies[1].Messages[0].Content[0]) {
		t.Error("the cached prefix differs between two steps of one agent")
	}
}

func TestStreamCutBeforeMessageStopIsAProviderError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
	}))
	defer srv.Close()
	p := open(t, providers.Endpoint{Model: testModel, BaseURL: srv.URL, APIKey: plantedKey, HTTPClient: srv.Client()})
	_, u, err := p.Step(context.Background(), stepRequest())
	if providers.ClassOf(err) != providers.ClassProvider || !strings.Contains(err.Error(), "message_stop") {
		t.Fatalf("err = %v, want a provider error about the missing message_stop", err)
	}
	if u.Input != 10 {
		t.Errorf("usage before the cut = %+v, want input 10 kept", u)
	}
}

func TestGarbledStreamsNeverPanic(t *testing.T) {
	streams := map[string]string{
		"delta for a block never started": "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"block out of order":              "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"not JSON":                        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\n\n",
		"error event that is not JSON":    "event: error\ndata: oops\n\n",
	}
	for name, body := range streams {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, body)
			}))
			defer srv.Close()
			p := open(t, providers.Endpoint{Model: testModel, BaseURL: srv.URL, APIKey: plantedKey, HTTPClient: srv.Client()})
			if _, _, err := p.Step(context.Background(), stepRequest()); providers.ClassOf(err) != providers.ClassProvider {
				t.Errorf("err = %v, want a provider error", err)
			}
		})
	}
}

func TestErrorsNeverShowTheKey(t *testing.T) {
	f := newFake(t)
	// A server (or proxy) that echoes the key back in its error message.
	f.script.Add(testModel,
		fake.Reply{Kind: fake.ReplyStatus, Status: 401, ErrorMessage: "invalid x-api-key " + plantedKey},
		fake.Reply{Kind: fake.ReplyStreamError, ErrorType: "overloaded_error", ErrorMessage: "overloaded for key " + plantedKey},
	)
	p := f.provider(t, testModel)
	var errs []error
	for range 2 {
		_, _, err := p.Step(context.Background(), stepRequest())
		errs = append(errs, err)
	}
	// A connection that fails outright.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	q := open(t, providers.Endpoint{Model: testModel, BaseURL: dead.URL, APIKey: plantedKey})
	_, _, err := q.Step(context.Background(), stepRequest())
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if _, isSDK := e.(interface{ DumpRequest(bool) []byte }); isSDK {
				break // the SDK's own error, reachable for errors.As, is not ours to print
			}
			for _, text := range []string{e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
				if strings.Contains(text, plantedKey) {
					t.Errorf("case %d: the key shows in %q", i, text)
				}
			}
		}
	}
}

func TestBaseURLWithOrWithoutV1AndAPIVersion(t *testing.T) {
	f := newFake(t)
	for _, base := range []string{f.URL, f.URL + "/", f.URL + "/v1", f.URL + "/v1/"} {
		p := open(t, providers.Endpoint{Model: testModel, BaseURL: base, APIKey: plantedKey, APIVersion: "2023-06-01-test", HTTPClient: f.Client()})
		if _, _, err := p.Step(context.Background(), stepRequest()); err != nil {
			t.Errorf("base %q: %v", base, err)
		}
	}
	calls := f.script.Calls()
	if len(calls) != 4 || calls[3].Header.Get("Anthropic-Version") != "2023-06-01-test" {
		t.Errorf("%d calls, version %q", len(calls), calls[len(calls)-1].Header.Get("Anthropic-Version"))
	}
	if _, err := New(providers.Endpoint{Model: testModel, BaseURL: "ftp://x"}); err == nil {
		t.Error("a non-http base URL was accepted")
	}
	if _, err := New(providers.Endpoint{BaseURL: f.URL}); err == nil {
		t.Error("an endpoint without a model was accepted")
	}
}

func TestEnvironmentIsIgnored(t *testing.T) {
	f := newFake(t)
	t.Setenv("ANTHROPIC_API_KEY", "dummy.from.the.environment.0000000000")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	if _, _, err := f.provider(t, testModel).Step(context.Background(), stepRequest()); err != nil {
		t.Fatal(err)
	}
	h := f.script.Calls()[0].Header
	if h.Get("X-Api-Key") != plantedKey || h.Get("X-Leak") != "" {
		t.Errorf("the environment leaked into the request: key=%q X-Leak=%q", h.Get("X-Api-Key"), h.Get("X-Leak"))
	}
}
