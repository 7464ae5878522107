package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// plantedKey is a key-shaped secret every test sends; no error may carry it.
const plantedKey = "dummy.PLANTED.gemini.test.key.0123456789"

const flash = "gemini-2.5-flash"
const flash3 = "gemini-3-flash-preview"

// wire records what the fake wrote back, so tests can compare what the client
// replays with what the server really sent.
type wire struct {
	http.Handler
	mu     sync.Mutex
	bodies []string
}

func (w *wire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	rec := &teeWriter{ResponseWriter: rw}
	w.Handler.ServeHTTP(rec, r)
	w.mu.Lock()
	w.bodies = append(w.bodies, rec.buf.String())
	w.mu.Unlock()
}

func (w *wire) responses() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bodies...)
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.buf.Write(b)
	return t.ResponseWriter.Write(b)
}

func (t *teeWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

type rig struct {
	script *fake.Script
	wire   *wire
	srv    *httptest.Server
	p      providers.Provider
}

// newRig starts the fake Gemini API and a real genai-backed provider on it.
func newRig(t testing.TB, model string) *rig {
	t.Helper()
	script := fake.NewScript()
	w := &wire{Handler: fake.NewGemini(script)}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	p, err := New(providers.Endpoint{Backend: "gemini", Model: model, BaseURL: srv.URL, APIKey: plantedKey, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &rig{script: script, wire: w, srv: srv, p: p}
}

// handlerRig runs the real provider against a hand-written handler, for wire
// shapes the fake never produces.
func handlerRig(t *testing.T, model string, h http.HandlerFunc) providers.Provider {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	p, err := New(providers.Endpoint{Backend: "gemini", Model: model, BaseURL: srv.URL, APIKey: plantedKey, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func newAnswerTool() providers.Tool {
	return providers.Tool{Name: providers.ToolNewAnswer, Description: "Submit a new answer.",
		Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`)}
}

func voteTool(enum ...string) providers.Tool {
	e, _ := json.Marshal(enum)
	return providers.Tool{Name: providers.ToolVote, Description: "Vote for the best answer.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":` + string(e) + `},"reason":{"type":"string"}},"required":["agent_id","reason"],"additionalProperties":false}`)}
}

func stepRequest(tools ...providers.Tool) providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep,
		System:  "You are one agent of a team. Call exactly one workflow function.",
		Prompt:  "Task: what is 6 times 7?",
		Tools:   tools,
	}
}

func args(t *testing.T, c providers.ToolCall) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(c.Args, &m); err != nil {
		t.Fatalf("arguments of %s are not a JSON object of strings: %s", c.Name, c.Args)
	}
	return m
}

// noKey fails if an error's text, or any error it wraps, carries the key.
func noKey(t *testing.T, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), plantedKey) {
			t.Fatal("an error text carries the API key")
		}
	}
}

func TestNewAnswerBecomesOneCall(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "6 × 7 = 42.\nAnswer: 42"})
	act, _, err := r.p.Step(context.Background(), stepRequest(newAnswerTool()))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("calls = %+v, want one new_answer", act.Calls)
	}
	if got := args(t, act.Calls[0])["content"]; got != "6 × 7 = 42.\nAnswer: 42" {
		t.Errorf("content = %q", got)
	}
	if act.Text != "" || len(act.Raw) == 0 {
		t.Errorf("text = %q, raw = %d bytes; want no text and the raw parts kept", act.Text, len(act.Raw))
	}
	calls := r.script.Calls()
	if len(calls) != 1 || calls[0].Format != "gemini" || calls[0].Model != flash || !calls[0].Stream {
		t.Fatalf("recorded calls = %+v, want one streamed gemini call for %s", calls, flash)
	}
	if calls[0].Header.Get("x-goog-api-key") != plantedKey {
		t.Error("the API key did not arrive in the x-goog-api-key header")
	}
}

func TestVoteNamesTheAgentAndReason(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyVote, Agent: "agent2", Reason: "it shows the work"})
	act, _, err := r.p.Step(context.Background(), stepRequest(newAnswerTool(), voteTool("agent1", "agent2")))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote {
		t.Fatalf("calls = %+v, want one vote", act.Calls)
	}
	if a := args(t, act.Calls[0]); a["agent_id"] != "agent2" || a["reason"] != "it shows the work" {
		t.Errorf("vote args = %v", a)
	}
	c := r.script.Calls()[0]
	if strings.Join(c.Tools, ",") != "new_answer,vote" || strings.Join(c.VoteEnum, ",") != "agent1,agent2" {
		t.Errorf("fake saw tools %v and vote enum %v", c.Tools, c.VoteEnum)
	}
}

func TestDefaultPolicyVotesWhenItCan(t *testing.T) {
	r := newRig(t, flash)
	act, _, err := r.p.Step(context.Background(), stepRequest(newAnswerTool(), voteTool("agent3")))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || args(t, act.Calls[0])["agent_id"] != "agent3" {
		t.Fatalf("calls = %+v, want the default vote for agent3", act.Calls)
	}
}

func TestTextReplyFallsBackToJSONInTheText(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash,
		fake.Reply{Kind: fake.ReplyText, Content: "I will vote now.\n```json\n{\"name\": \"vote\", \"arguments\": {\"agent_id\": \"agent1\", \"reason\": \"correct\"}}\n```"},
		fake.Reply{Kind: fake.ReplyText, Content: "The answer is 42, and I am quite sure about it."},
	)
	req := stepRequest(newAnswerTool(), voteTool("agent1"))

	act, _, err := r.p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || args(t, act.Calls[0])["agent_id"] != "agent1" {
		t.Fatalf("calls = %+v, want the vote written in the text", act.Calls)
	}
	if !strings.Contains(act.Text, "I will vote now.") {
		t.Errorf("text = %q, want the whole streamed text", act.Text)
	}

	act, _, err = r.p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 0 || act.Text != "The answer is 42, and I am quite sure about it." {
		t.Fatalf("action = %+v, want the prose as text and no call", act)
	}
}

func TestMalformedFunctionCallIsNoCall(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyMalformedArgs})
	act, _, err := r.p.Step(context.Background(), stepRequest(newAnswerTool()))
	if err != nil {
		t.Fatalf("a malformed function call is the model's mistake, not an error: %v", err)
	}
	if len(act.Calls) != 0 {
		t.Fatalf("calls = %+v, want none", act.Calls)
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
		{"rate limit with retryDelay", fake.Reply{Kind: fake.ReplyStatus, Status: 429, RetryAfter: "12s"},
			providers.ClassRateLimit, 429, 12 * time.Second, "rate limited"},
		{"rate limit, delay only in the message", fake.Reply{Kind: fake.ReplyStatus, Status: 429,
			ErrorMessage: "Resource has been exhausted. Please retry in 3.5s."},
			providers.ClassRateLimit, 429, 3500 * time.Millisecond, "rate limited"},
		{"daily quota", fake.Reply{Kind: fake.ReplyStatus, Status: 429, RetryAfter: "40s", ErrorType: "daily_quota"},
			providers.ClassQuota, 429, 0, "GOOGLE_API_KEY or GEMINI_API_KEY"},
		{"daily quota named only in the message", fake.Reply{Kind: fake.ReplyStatus, Status: 429, ErrorCode: "RESOURCE_EXHAUSTED",
			ErrorMessage: "Quota exceeded for quota metric 'Generate Content requests per day'"},
			providers.ClassQuota, 429, 0, "Retrying will not help"},
		{"overloaded", fake.Reply{Kind: fake.ReplyStatus, Status: 503},
			providers.ClassOverloaded, 503, 0, "overloaded"},
		{"invalid API key", fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorCode: "API_KEY_INVALID"},
			providers.ClassAuth, 400, 0, "refused the API key"},
		{"unauthenticated", fake.Reply{Kind: fake.ReplyStatus, Status: 401},
			providers.ClassAuth, 401, 0, "refused the API key"},
		{"permission denied", fake.Reply{Kind: fake.ReplyStatus, Status: 403},
			providers.ClassAuth, 403, 0, "denied permission"},
		{"internal error", fake.Reply{Kind: fake.ReplyStatus, Status: 500},
			providers.ClassProvider, 500, 0, "failed (500 INTERNAL)"},
		{"bad request", fake.Reply{Kind: fake.ReplyStatus, Status: 400, ErrorMessage: "Request contains an invalid argument."},
			providers.ClassProvider, 400, 0, "invalid argument"},
		{"internal error mid-stream", fake.Reply{Kind: fake.ReplyStreamError},
			providers.ClassProvider, 500, 0, "failed (500 INTERNAL)"},
		{"overloaded mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 503},
			providers.ClassOverloaded, 503, 0, "overloaded"},
		{"rate limit mid-stream", fake.Reply{Kind: fake.ReplyStreamError, Status: 429, RetryAfter: "2"},
			providers.ClassRateLimit, 429, 2 * time.Second, "rate limited"},
		{"server echoes the key", fake.Reply{Kind: fake.ReplyStatus, Status: 403,
			ErrorMessage: "Consumer 'api_key:" + plantedKey + "' has been suspended."},
			providers.ClassAuth, 403, 0, "[redacted]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, flash)
			r.script.Add(flash, tc.reply)
			_, _, err := r.p.Step(context.Background(), stepRequest(newAnswerTool()))
			if err == nil {
				t.Fatal("no error")
			}
			noKey(t, err)
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *providers.Error", err)
			}
			if pe.Class != tc.class || pe.Status != tc.status || pe.RetryAfter != tc.retryAfter {
				t.Errorf("class %s, status %d, retry after %v; want %s, %d, %v (%v)", pe.Class, pe.Status, pe.RetryAfter, tc.class, tc.status, tc.retryAfter, err)
			}
			if !strings.Contains(err.Error(), tc.says) || !strings.HasPrefix(err.Error(), "gemini "+flash) {
				t.Errorf("error %q should name the model and say %q", err, tc.says)
			}
			if pe.Err == nil {
				t.Error("the cause is not wrapped")
			}
		})
	}
}

func TestStallHitsTheDeadlinePromptly(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyStall})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := r.p.Step(ctx, stepRequest(newAnswerTool()))
	if took := time.Since(start); took > 10*time.Second { // the stall never ends: any bound catches a missed deadline
		t.Fatalf("the step returned %v after a 300ms deadline", took)
	}
	if providers.ClassOf(err) != providers.ClassTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v (class %s), want a timeout wrapping context.DeadlineExceeded", err, providers.ClassOf(err))
	}
	noKey(t, err)
}

func TestCancelMidStreamStopsPromptly(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyStall})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := r.p.Step(ctx, stepRequest(newAnswerTool()))
		done <- err
	}()
	// Wait until the fake has the request (its first chunk follows at once).
	for deadline := time.Now().Add(5 * time.Second); len(r.script.Calls()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the fake")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		if took := time.Since(cancelled); took > time.Second {
			t.Errorf("the step took %v to stop after cancel", took)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want one wrapping context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the step did not stop after cancel")
	}
}

func TestUsageCountsThoughtsAsOutputAndCachedAsInput(t *testing.T) {
	r := newRig(t, flash)
	r.script.Add(flash, fake.Reply{Kind: fake.ReplyNewAnswer, Content: "42",
		Usage: &fake.Usage{Input: 1200, CachedInput: 1024, Output: 180, Reasoning: 150}})
	_, u, err := r.p.Step(context.Background(), stepRequest(newAnswerTool()))
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{Input: 1200, CachedInput: 1024, Output: 180, Reasoning: 150}
	if u != want {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
	var last struct {
		UsageMetadata map[string]int `json:"usageMetadata"`
	}
	body := r.wire.responses()[0]
	frames := strings.Split(strings.TrimSpace(body), "\r\n\r\n")
	if err := json.Unmarshal([]byte(strings.TrimPrefix(frames[len(frames)-1], "data: ")), &last); err != nil {
		t.Fatalf("last frame: %v", err)
	}
	if m := last.UsageMetadata; m["candidatesTokenCount"] != 30 || m["thoughtsTokenCount"] != 150 || m["cachedContentTokenCount"] != 1024 || m["promptTokenCount"] != 1200 {
		t.Errorf("the fake sent usageMetadata %v", m)
	}
}

func TestUsageFromTheLastChunk(t *testing.T) {
	p := handlerRig(t, flash, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}],"usageMetadata":{"promptTokenCount":58,"totalTokenCount":58}}`+"\r\n\r\n")
		fmt.Fprint(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":58,"candidatesTokenCount":7,"thoughtsTokenCount":55,"cachedContentTokenCount":20,"totalTokenCount":120},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`+"\r\n\r\n")
	})
	act, u, err := p.Step(context.Background(), stepRequest(newAnswerTool()))
	if err != nil {
		t.Fatal(err)
	}
	if want := (providers.Usage{Input: 58, CachedInput: 20, Output: 62, Reasoning: 55}); u != want {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
	if act.Text != "Hello" {
		t.Errorf("text = %q, want the streamed pieces joined", act.Text)
	}
	if u.CostUSD != nil {
		t.Error("the adapter must leave the cost to the pricing layer")
	}
}

func TestRequestShape(t *testing.T) {
	r := newRig(t, flash)
	temp := 0.3
	req := stepRequest(newAnswerTool(), voteTool("agent1", "agent2"))
	req.Temperature, req.MaxOutputTokens, req.ReasoningEffort = &temp, 2048, "low"
	if _, _, err := r.p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := r.script.Calls()[0]
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
		SystemInstruction struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Description          string          `json:"description"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		ToolConfig struct {
			FunctionCallingConfig struct {
				Mode                 string   `json:"mode"`
				AllowedFunctionNames []string `json:"allowedFunctionNames"`
			} `json:"functionCallingConfig"`
		} `json:"toolConfig"`
		GenerationConfig struct {
			Temperature     float64 `json:"temperature"`
			MaxOutputTokens int     `json:"maxOutputTokens"`
			ThinkingConfig  struct {
				ThinkingBudget *int   `json:"thinkingBudget"`
				ThinkingLevel  string `json:"thinkingLevel"`
			} `json:"thinkingConfig"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Contents) != 1 || body.Contents[0].Role != "user" || body.Contents[0].Parts[0].Text != req.Prompt {
		t.Errorf("contents = %+v, want the prompt as one user turn", body.Contents)
	}
	if len(body.SystemInstruction.Parts) != 1 || body.SystemInstruction.Parts[0].Text != req.System {
		t.Errorf("system instruction = %+v", body.SystemInstruction)
	}
	if len(body.Tools) != 1 || len(body.Tools[0].FunctionDeclarations) != 2 {
		t.Fatalf("tools = %+v, want one tool with two declarations", body.Tools)
	}
	for i, d := range body.Tools[0].FunctionDeclarations {
		if d.Name != req.Tools[i].Name || d.Description != req.Tools[i].Description {
			t.Errorf("declaration %d = %s %q", i, d.Name, d.Description)
		}
		var got, want any
		_ = json.Unmarshal(d.ParametersJSONSchema, &got)
		_ = json.Unmarshal(req.Tools[i].Schema, &want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s parametersJsonSchema = %s, want the tool's schema as written", d.Name, d.ParametersJSONSchema)
		}
	}
	if fc := body.ToolConfig.FunctionCallingConfig; fc.Mode != "ANY" || strings.Join(fc.AllowedFunctionNames, ",") != "new_answer,vote" {
		t.Errorf("function calling config = %+v, want mode ANY over both tools", fc)
	}
	g := body.GenerationConfig
	if g.Temperature < 0.2999 || g.Temperature > 0.3001 || g.MaxOutputTokens != 2048 {
		t.Errorf("temperature %v, maxOutputTokens %d", g.Temperature, g.MaxOutputTokens)
	}
	if g.ThinkingConfig.ThinkingBudget == nil || *g.ThinkingConfig.ThinkingBudget != 1024 || g.ThinkingConfig.ThinkingLevel != "" {
		t.Errorf("thinking config = %+v, want thinkingBudget 1024 for gemini-2.5-flash at low effort", g.ThinkingConfig)
	}
	for _, forbidden := range []string{"continuationToken", "automaticContinuation", plantedKey} {
		if bytes.Contains(c.Body, []byte(forbidden)) {
			t.Errorf("the request body carries %q", strings.ReplaceAll(forbidden, plantedKey, "the API key"))
		}
	}
}

func TestThinkingLevelForGemini3(t *testing.T) {
	r := newRig(t, flash3)
	req := stepRequest(newAnswerTool())
	req.ReasoningEffort = "medium"
	if _, _, err := r.p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		GenerationConfig struct {
			ThinkingConfig map[string]any `json:"thinkingConfig"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(r.script.Calls()[0].Body, &body)
	if tc := body.GenerationConfig.ThinkingConfig; tc["thinkingLevel"] != "MEDIUM" || tc["thinkingBudget"] != nil {
		t.Errorf("thinking config = %v, want thinkingLevel MEDIUM and no budget", tc)
	}
}

func TestThinkingMapping(t *testing.T) {
	cases := []struct {
		model, effort string
		budget        int32 // -1: no budget
		level         string
	}{
		{"gemini-2.5-flash", "minimal", 0, ""},
		{"gemini-2.5-flash-lite", "high", 24576, ""},
		{"gemini-2.5-pro", "minimal", 128, ""},
		{"gemini-2.5-pro", "high", 32768, ""},
		{"models/gemini-2.5-pro", "medium", 8192, ""},
		{"gemini-3-flash-preview", "minimal", -1, "MINIMAL"},
		{"gemini-3-pro-preview", "minimal", -1, "LOW"},
		{"gemini-3-pro-preview", "medium", -1, "HIGH"},
		{"gemini-3.1-pro-preview", "medium", -1, "MEDIUM"},
		{"gemini-3.1-flash-lite", "low", -1, "LOW"},
		{"gemini-3.5-flash", "high", -1, "HIGH"},
	}
	for _, tc := range cases {
		got := thinkingFor(tc.model, tc.effort)
		if got == nil {
			t.Errorf("%s at %s: no thinking config", tc.model, tc.effort)
			continue
		}
		budget := int32(-1)
		if got.ThinkingBudget != nil {
			budget = *got.ThinkingBudget
		}
		if budget != tc.budget || string(got.ThinkingLevel) != tc.level {
			t.Errorf("%s at %s: budget %d level %q, want %d %q", tc.model, tc.effort, budget, got.ThinkingLevel, tc.budget, tc.level)
		}
	}
	for _, none := range [][2]string{{"gemini-2.5-flash", ""}, {"gemini-2.0-flash", "high"}, {"gemma-3-27b-it", "low"}, {"gemini-2.5-pro", "extreme"}} {
		if got := thinkingFor(none[0], none[1]); got != nil {
			t.Errorf("%s at %q: thinking config %+v, want none", none[0], none[1], got)
		}
	}
}

// sseParts decodes the candidate parts of every frame the fake streamed.
func sseParts(t *testing.T, body string) []map[string]any {
	t.Helper()
	var parts []map[string]any
	for _, frame := range strings.Split(strings.TrimSpace(body), "\r\n\r\n") {
		var resp struct {
			Candidates []struct {
				Content struct {
					Parts []map[string]any `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(frame, "data: ")), &resp); err != nil {
			t.Fatalf("frame %q: %v", frame, err)
		}
		for _, c := range resp.Candidates {
			parts = append(parts, c.Content.Parts...)
		}
	}
	return parts
}

type sentContents []struct {
	Role  string           `json:"role"`
	Parts []map[string]any `json:"parts"`
}

func sent(t *testing.T, c fake.Call) sentContents {
	t.Helper()
	var body struct {
		Contents sentContents `json:"contents"`
	}
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Contents
}

func TestHistoryReplayEchoesTheThoughtSignature(t *testing.T) {
	r := newRig(t, flash3)
	r.script.Add(flash3,
		fake.Reply{Kind: fake.ReplyVote, Agent: "agent9", Reason: "no such agent"},
		fake.Reply{Kind: fake.ReplyVote, Agent: "agent1", Reason: "correct"},
	)
	req := stepRequest(newAnswerTool(), voteTool("agent1", "agent2"))
	first, _, err := r.p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	issued, _ := sseParts(t, r.wire.responses()[0])[0]["thoughtSignature"].(string)
	if issued == "" {
		t.Fatal("the fake issued no thought signature for a gemini-3 function call")
	}

	problem := `Invalid agent_id "agent9". Valid agents: agent1, agent2.`
	req.History = []providers.Turn{{Reply: first, Problem: problem}}
	req.Attempt = 1
	second, _, err := r.p.Step(context.Background(), req)
	if err != nil {
		t.Fatalf("the replayed history was refused: %v", err)
	}
	if len(second.Calls) != 1 || args(t, second.Calls[0])["agent_id"] != "agent1" {
		t.Fatalf("second attempt = %+v", second.Calls)
	}

	contents := sent(t, r.script.Calls()[1])
	if len(contents) != 3 || contents[0].Role != "user" || contents[1].Role != "model" || contents[2].Role != "user" {
		t.Fatalf("contents = %+v, want user, model, user", contents)
	}
	call := contents[1].Parts[0]
	fc, _ := call["functionCall"].(map[string]any)
	if fc["name"] != "vote" || fmt.Sprint(fc["args"]) != fmt.Sprint(map[string]any{"agent_id": "agent9", "reason": "no such agent"}) {
		t.Errorf("replayed model part = %v, want the refused vote", call)
	}
	if call["thoughtSignature"] != issued {
		t.Errorf("replayed signature %v, want the one the server issued (%s)", call["thoughtSignature"], issued)
	}
	fr, _ := contents[2].Parts[0]["functionResponse"].(map[string]any)
	resp, _ := fr["response"].(map[string]any)
	if fr["name"] != "vote" || resp["error"] != problem {
		t.Errorf("function response = %v, want the problem for the vote call", fr)
	}
}

func TestReplayWithoutRawUsesTheDocumentedDummySignature(t *testing.T) {
	r := newRig(t, flash3)
	req := stepRequest(newAnswerTool(), voteTool("agent1"))
	req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.VoteCall("agent7", "x")}}, Problem: "Invalid agent_id."}}
	if _, _, err := r.p.Step(context.Background(), req); err != nil {
		t.Fatalf("the fake (like the API) refused a rebuilt call: %v", err)
	}
	sig, _ := sent(t, r.script.Calls()[0])[1].Parts[0]["thoughtSignature"].(string)
	if raw, _ := base64.StdEncoding.DecodeString(sig); string(raw) != fake.GeminiDummySignature {
		t.Errorf("signature %q, want the documented dummy", sig)
	}
}

func TestFakeRefusesAMissingSignature(t *testing.T) {
	// The strict check the replay test relies on: without the signature the
	// fake, like Gemini 3, answers 400.
	r := newRig(t, flash3)
	req := stepRequest(newAnswerTool(), voteTool("agent1"))
	raw, _ := json.Marshal(map[string]any{"gemini": map[string]any{"role": "model", "parts": []any{
		map[string]any{"functionCall": map[string]any{"name": "vote", "args": map[string]any{"agent_id": "agent7"}}},
	}}})
	req.History = []providers.Turn{{Reply: providers.Action{Raw: raw}, Problem: "Invalid agent_id."}}
	_, _, err := r.p.Step(context.Background(), req)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Status != 400 || !strings.Contains(err.Error(), "thought_signature") {
		t.Fatalf("err = %v, want a 400 about the missing thought_signature", err)
	}
}

func TestReplayOfTextAndOfNothing(t *testing.T) {
	r := newRig(t, flash)
	req := stepRequest(newAnswerTool())
	prose, _, err := func() (providers.Action, providers.Usage, error) {
		r.script.Add(flash, fake.Reply{Kind: fake.ReplyText, Content: "Forty-two."})
		return r.p.Step(context.Background(), req)
	}()
	if err != nil {
		t.Fatal(err)
	}
	req.History = []providers.Turn{
		{Reply: prose, Problem: "Call new_answer with your answer."},
		{Reply: providers.Action{}, Problem: "Exactly one workflow call, please."},
	}
	if _, _, err := r.p.Step(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	contents := sent(t, r.script.Calls()[1])
	if len(contents) != 3 {
		t.Fatalf("contents = %+v, want prompt, prose, problem", contents)
	}
	if contents[1].Role != "model" || contents[1].Parts[0]["text"] != "Forty-two." {
		t.Errorf("model turn = %+v, want the prose replayed", contents[1])
	}
	if contents[2].Role != "user" || contents[2].Parts[0]["text"] != "Call new_answer with your answer." ||
		len(contents[2].Parts) != 2 || !strings.Contains(fmt.Sprint(contents[2].Parts[1]["text"]), "Exactly one workflow call") {
		t.Errorf("user turn = %+v, want both problems", contents[2])
	}
}

func TestNonObjectArgumentsDoNotPanic(t *testing.T) {
	for _, args := range []string{`"oops"`, `[1,2]`, `null`, `42`} {
		p := handlerRig(t, flash, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"new_answer","args":%s}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}`+"\r\n\r\n", args)
		})
		act, _, err := p.Step(context.Background(), stepRequest(newAnswerTool()))
		if err != nil {
			if c := providers.ClassOf(err); c != providers.ClassBadOutput {
				t.Errorf("args %s: class %s, want bad_output (%v)", args, c, err)
			}
			noKey(t, err)
			continue
		}
		if len(act.Calls) != 1 || !json.Valid(act.Calls[0].Args) || !bytes.HasPrefix(act.Calls[0].Args, []byte("{")) {
			t.Errorf("args %s: calls %+v, want arguments that are a JSON object", args, act.Calls)
		}
	}
}

func TestCutStreamAndBlockedPromptAreProviderErrors(t *testing.T) {
	cut := handlerRig(t, flash, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}]}`+"\r\n\r\n")
	})
	_, cu, err := cut.Step(context.Background(), stepRequest(newAnswerTool()))
	if providers.ClassOf(err) != providers.ClassProvider || !strings.Contains(fmt.Sprint(err), "before the model finished") {
		t.Errorf("cut stream: %v", err)
	}
	if cu.Input <= 0 || cu.Output <= 0 || !cu.CostEstimated {
		t.Errorf("cut stream without usage: usage %+v; want an estimate (providers.Charge)", cu)
	}
	blocked := handlerRig(t, flash, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":9}}`+"\r\n\r\n")
	})
	_, u, err := blocked.Step(context.Background(), stepRequest(newAnswerTool()))
	if providers.ClassOf(err) != providers.ClassProvider || !strings.Contains(fmt.Sprint(err), "PROHIBITED_CONTENT") || u.Input != 9 || u.CostEstimated {
		t.Errorf("blocked prompt: %v, usage %+v; want the reported usage, not an estimate", err, u)
	}
}

func TestClientIgnoresAmbientGoogleVariables(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "ambient-google-key-must-not-be-used")
	t.Setenv("GEMINI_API_KEY", "ambient-gemini-key-must-not-be-used")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1/")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "ambient-project")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
	r := newRig(t, flash)
	if _, _, err := r.p.Step(context.Background(), stepRequest(newAnswerTool())); err != nil {
		t.Fatalf("the step did not reach the fake: %v", err)
	}
	c := r.script.Calls()[0]
	if c.Header.Get("x-goog-api-key") != plantedKey {
		t.Error("an ambient key replaced the endpoint's key")
	}

	def, err := New(providers.Endpoint{Backend: "gemini", Model: flash, APIKey: plantedKey})
	if err != nil {
		t.Fatal(err)
	}
	cc := def.(*provider).client.ClientConfig()
	if cc.HTTPOptions.BaseURL != DefaultBaseURL || cc.Backend.String() != "BackendGeminiAPI" || cc.APIKey != plantedKey || cc.HTTPOptions.RetryOptions != nil {
		t.Errorf("client config: base %q, backend %s, retries %v; want the default Gemini API base, no Vertex, no SDK retries",
			cc.HTTPOptions.BaseURL, cc.Backend, cc.HTTPOptions.RetryOptions)
	}

	_, err = New(providers.Endpoint{Backend: "gemini", Model: flash})
	if providers.ClassOf(err) != providers.ClassAuth || !strings.Contains(fmt.Sprint(err), "GOOGLE_API_KEY") {
		t.Errorf("New without a key: %v, want an auth error naming the variables (never an ambient key)", err)
	}
}

func TestTransportErrorIsAProviderErrorWithoutTheKey(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, err := New(providers.Endpoint{Backend: "gemini", Model: flash, BaseURL: url, APIKey: plantedKey})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.Step(context.Background(), stepRequest(newAnswerTool()))
	if providers.ClassOf(err) != providers.ClassProvider {
		t.Errorf("err = %v, want a provider error", err)
	}
	noKey(t, err)
}

func TestScrubRemovesKeysFromText(t *testing.T) {
	got := scrub("POST https://x/v1beta/models/m:generateContent?key="+plantedKey+"&alt=sse failed; key "+plantedKey, plantedKey)
	if strings.Contains(got, plantedKey) || !strings.Contains(got, "key=[redacted]&alt=sse") {
		t.Errorf("scrub left %q", got)
	}
	if got := scrub("https://x/?key=SOMEOTHERKEY", ""); strings.Contains(got, "SOMEOTHERKEY") {
		t.Errorf("scrub left a key query parameter: %q", got)
	}
}

func TestInvalidToolSchemaSendsNothing(t *testing.T) {
	r := newRig(t, flash)
	bad := providers.Tool{Name: providers.ToolNewAnswer, Schema: json.RawMessage(`{"type":`)}
	_, _, err := r.p.Step(context.Background(), stepRequest(bad))
	if providers.ClassOf(err) != providers.ClassProvider || !strings.Contains(fmt.Sprint(err), "not valid JSON") {
		t.Errorf("err = %v, want a provider error about the schema", err)
	}
	if n := len(r.script.Calls()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}
