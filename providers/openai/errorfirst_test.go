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

// TestAResponsesStreamThatOnlySaysErrorIsNotCharged: a stream whose one
// event is an error (a Responses-compatible server refusing the request
// once it has begun its stream) never created a response, let alone ran
// the model on the prompt. Like a Chat Completions stream that opens with
// an error, it costs nothing; charged an estimate of the whole input, each
// retry of it would spend a budget on nothing.
func TestAResponsesStreamThatOnlySaysErrorIsNotCharged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: error\n"+`data: {"type":"error","code":"server_error","message":"the model is not loaded","sequence_number":0}`+"\n\n")
	}))
	defer srv.Close()
	p, err := openai.NewResponses(providers.Endpoint{Backend: "vllm", Model: "m", BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, u, err := p.Step(context.Background(), stepRequest())
	if err == nil {
		t.Fatal("a stream that said only an error succeeded")
	}
	if u != (providers.Usage{}) {
		t.Fatalf("usage = %+v; want nothing charged for a stream that never created a response", u)
	}
}
