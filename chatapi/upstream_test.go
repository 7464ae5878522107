package chatapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAProviderRefusingTheKeyIsABadGatewayTheClientDoesNotRetry: when the
// provider refuses the operator's key before the team starts (the models
// pre-flight), the chat client hears a 502 saying so, which the official
// OpenAI client, retries left on, does not send again (x-should-retry:
// false): it was a 500 internal_error, which it retried twice, each retry
// asking the provider with the same refused key.
func TestAProviderRefusingTheKeyIsABadGatewayTheClientDoesNotRetry(t *testing.T) {
	var asked atomic.Int32
	stores := &replicaStores{stores: map[string]coordination.Store{},
		checkModels: func(_ context.Context, specs []providers.Spec) []error {
			asked.Add(1)
			errs := make([]error, len(specs))
			for i := range errs {
				errs[i] = &providers.Error{Class: providers.ClassAuth, Status: http.StatusUnauthorized,
					Message: "openai refused the API key (HTTP 401); check that OPENAI_API_KEY holds a valid key with access to gpt-5"}
			}
			return errs
		}}
	s := serveOn(t, mcp.Options{}, mcp.HTTPOptions{}, stores)
	c := openai.NewClient(option.WithBaseURL(s.url+"/v1"), option.WithAPIKey(tokenA), option.WithMaxRetries(2))
	_, err := c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 6 * 7?"))
	apiErr := wantAPIError(t, "a refused provider key", err, http.StatusBadGateway, "upstream_auth_failed")
	if apiErr.Type != "upstream_error" {
		t.Errorf("type %q, want upstream_error", apiErr.Type)
	}
	if got := apiErr.Response.Header.Get("x-should-retry"); got != "false" {
		t.Errorf("x-should-retry %q, want false", got)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the client sent the request %d times, want once", n)
	}
	for _, want := range []string{"refused the API key", "OPENAI_API_KEY", "operator", "retrying will not help"} {
		if !strings.Contains(apiErr.Message, want) {
			t.Errorf("message %q lacks %q", apiErr.Message, want)
		}
	}
}
