package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// runningCut is what a cut reply streams before its connection drops: far
// more text than the running usage's few tokens say.
var runningCut = strings.Repeat("The answer is 42, and here is why it is 42. ", 40)

// TestAChatStreamCutAfterRunningUsageIsChargedAnEstimate: a server that
// sends the usage so far in every chunk (vLLM with continuous_usage_stats,
// some gateways) and is then cut off has not sent its final report; the last
// running count is only what it had counted when the connection dropped.
// The call is charged as a cut one: the reported input stands, the output is
// at least what streamed, and the cost is marked estimated.
func TestAChatStreamCutAfterRunningUsageIsChargedAnEstimate(t *testing.T) {
	for _, tg := range targets {
		if tg.format != "chat" {
			continue
		}
		t.Run(tg.name, func(t *testing.T) {
			r := newRig(t)
			r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyCut, Content: runningCut, RunningUsage: true})
			_, u, err := r.open(t, tg).Step(context.Background(), stepRequest())
			if err == nil {
				t.Fatal("a cut stream's step did not fail")
			}
			if want := providers.EstimateTokens(len(runningCut)); u.Input <= 0 || u.Output < want || !u.CostEstimated {
				t.Fatalf("usage = %+v; want the reported input, at least %d output tokens for the %d bytes streamed, marked estimated",
					u, want, len(runningCut))
			}
		})
	}
}

// TestAChatStreamWithRunningUsageIsChargedItsFinalReport: the same server's
// stream that ends properly (finish_reason, the usage chunk, [DONE]) is
// charged its last report exactly, not an estimate.
func TestAChatStreamWithRunningUsageIsChargedItsFinalReport(t *testing.T) {
	r := newRig(t)
	tg := targets[1]
	r.script.Add(tg.model, fake.Reply{Kind: fake.ReplyNewAnswer, Content: runningCut, RunningUsage: true,
		Usage: &fake.Usage{Input: 1000, Output: 300}})
	act, u, err := r.open(t, tg).Step(context.Background(), stepRequest())
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("Step = %+v, %v", act, err)
	}
	if u.Input != 1000 || u.Output != 300 || u.CostEstimated {
		t.Fatalf("usage = %+v; want the final report, 1000 in and 300 out, not estimated", u)
	}
}

// TestAChatStreamCutInItsReasoningIsChargedTheReasoning: a reasoning model
// behind Chat Completions streams its thinking outside content, as
// reasoning_content (DeepSeek, vLLM, SGLang) or reasoning (OpenRouter,
// Ollama). Cut while it thinks, before any usage, the call is charged at
// least the reasoning that streamed: the model was paid to write it.
func TestAChatStreamCutInItsReasoningIsChargedTheReasoning(t *testing.T) {
	thought := strings.Repeat("Six sevens: 7, 14, 21, 28, 35, 42. ", 30)
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				chunk := func(delta string) {
					fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":null}]}`+"\n\n", delta)
					w.(http.Flusher).Flush()
				}
				chunk(`{"role":"assistant","content":""}`)
				for _, piece := range []string{thought[:len(thought)/2], thought[len(thought)/2:]} {
					chunk(fmt.Sprintf(`{%q:%q}`, field, piece))
				}
				panic(http.ErrAbortHandler) // the connection drops mid-thought
			}))
			defer srv.Close()
			p, err := openai.NewChat(providers.Endpoint{Backend: "vllm", Model: "m", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			_, u, err := p.Step(context.Background(), stepRequest())
			if err == nil {
				t.Fatal("a cut stream's step did not fail")
			}
			if want := providers.EstimateTokens(len(thought)); u.Output < want || !u.CostEstimated {
				t.Fatalf("usage = %+v; want at least %d output tokens for the %d bytes of reasoning streamed, marked estimated", u, want, len(thought))
			}
		})
	}
}
