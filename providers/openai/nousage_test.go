package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// TestAServerThatNeverReportsUsageIsChargedAnEstimate: an OpenAI-compatible
// server that finishes its reply but sends no usage chunk (it ignores
// stream_options.include_usage, or closes the stream right after the
// finish_reason) ran the model all the same. Counted as nothing, no budget
// would ever bind against it; the step is charged an estimate instead.
func TestAServerThatNeverReportsUsageIsChargedAnEstimate(t *testing.T) {
	const answer = `{"content":"42, because six sevens are forty-two."}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
		}
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"new_answer","arguments":""}}]}`, "null")
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, answer), "null")
		chunk(`{}`, `"tool_calls"`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	p, err := openai.NewChat(providers.Endpoint{Backend: "vllm", Model: "m", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	req := stepRequest()
	act, u, err := p.Step(context.Background(), req)
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("Step = %+v, %v", act, err)
	}
	if in := int64(len(req.System)+len(req.Prompt)) / 4; u.Input < in || u.Output < int64(len(answer)/4) || !u.CostEstimated {
		t.Fatalf("usage = %+v; want at least %d input and %d output tokens, marked estimated", u, in, len(answer)/4)
	}
}

// TestAResponseReturnedWholeWithZeroUsageIsChargedWhatItReturned: a
// Responses server that sends its output whole, in response.completed,
// without deltas, and reports zero usage still returned the answer; the
// output charged is at least that answer, not the nothing that streamed.
func TestAResponseReturnedWholeWithZeroUsageIsChargedWhatItReturned(t *testing.T) {
	const answer = `{"content":"42, because six sevens are forty-two."}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":1,\"response\":{\"id\":\"r1\",\"object\":\"response\",\"status\":\"completed\","+
			"\"output\":[{\"type\":\"function_call\",\"id\":\"fc1\",\"call_id\":\"call_1\",\"name\":\"new_answer\",\"arguments\":%q,\"status\":\"completed\"}],"+
			"\"usage\":{\"input_tokens\":0,\"output_tokens\":0,\"total_tokens\":0,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens_details\":{\"reasoning_tokens\":0}}}}\n\n", answer)
	}))
	defer srv.Close()
	p, err := openai.NewResponses(providers.Endpoint{Backend: "openai", Model: "gpt-5-mini", APIKey: "sk-test-dummy-not-a-key-0000",
		BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	act, u, err := p.Step(context.Background(), stepRequest())
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("Step = %+v, %v", act, err)
	}
	if u.Input <= 0 || u.Output < int64(len(answer)/4) || !u.CostEstimated {
		t.Fatalf("usage = %+v; want input estimated and at least %d output tokens, marked estimated", u, len(answer)/4)
	}
}
