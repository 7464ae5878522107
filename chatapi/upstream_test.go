package chatapi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// TestARunTheProvidersFailedSaysWhichFailureEndedIt: a run whose agents
// all failed upstream the same way is answered with what failed — the key
// (502, not retried: only the operator can fix it), the account's quota
// (likewise), a rate limit (429) or an outage (503) — not 422 no_answer,
// which said nothing of it. A rate limit or an outage may be retried when
// the run cost nothing (these sims' failures are free): a retry runs the
// team again, so one that had paid for a step is not retried. Agents that failed in different ways stay 422 no_answer.
func TestARunTheProvidersFailedSaysWhichFailureEndedIt(t *testing.T) {
	dir := t.TempDir()
	script := func(classes ...string) string {
		var acts []string
		if classes[0] == "answer" {
			// A reply without a call first, which the sim charges for: the run costs
			// something before it fails.
			acts, classes = append(acts, `{"action":"text","content":"thinking"}`), classes[1:]
		}
		for range 4 {
			for _, c := range classes {
				acts = append(acts, `{"action":"error","class":"`+c+`"}`)
			}
		}
		f := filepath.Join(dir, strings.Join(classes, "-")+".json")
		if err := os.WriteFile(f, []byte("["+strings.Join(acts, ",")+"]"), 0o600); err != nil {
			t.Fatal(err)
		}
		return "sim/script:file=" + f
	}
	for _, tc := range []struct {
		a, b    string // the agents' failures
		status  int
		typ     string
		code    string
		noRetry bool
		says    string
	}{
		{"auth", "auth", http.StatusBadGateway, "upstream_error", "upstream_auth_failed", true, "API key"},
		{"quota", "quota", http.StatusBadGateway, "upstream_error", "upstream_quota_exceeded", true, "quota"},
		{"rate_limit", "rate_limit", http.StatusTooManyRequests, "rate_limit_error", "upstream_rate_limited", false, "rate-limited"},
		{"overloaded", "provider", http.StatusServiceUnavailable, "server_error", "upstream_unavailable", false, "unavailable"},
		{"timeout", "overloaded", http.StatusServiceUnavailable, "server_error", "upstream_unavailable", false, "unavailable"},
		{"answer,rate_limit", "answer,rate_limit", http.StatusTooManyRequests, "rate_limit_error", "upstream_rate_limited", true, "rate-limited"},
		{"auth", "rate_limit", http.StatusUnprocessableEntity, "team_error", "no_answer", false, "No answer"},
		{"bad_output", "bad_output", http.StatusUnprocessableEntity, "team_error", "no_answer", false, "No answer"},
	} {
		t.Run(tc.a+"+"+tc.b, func(t *testing.T) {
			team := fmt.Sprintf("agents: [{model: '%s'}, {model: '%s'}]\n", script(strings.Split(tc.a, ",")...), script(strings.Split(tc.b, ",")...))
			s := serveTeams(t, mcp.Options{}, mcp.HTTPOptions{}, nil, map[string]string{"t.yaml": team})
			c := s.client(tokenA)
			_, err := c.Chat.Completions.New(context.Background(), ask("massgen/t", "What is 6 * 7?"))
			apiErr := wantAPIError(t, "a run its providers failed", err, tc.status, tc.code)
			if apiErr.Type != tc.typ || !strings.Contains(apiErr.Message, tc.says) {
				t.Errorf("type %q message %q, want type %s saying %q", apiErr.Type, apiErr.Message, tc.typ, tc.says)
			}
			if got := apiErr.Response.Header.Get("x-should-retry") == "false"; got != tc.noRetry {
				t.Errorf("x-should-retry %q, want it false: %v", apiErr.Response.Header.Get("x-should-retry"), tc.noRetry)
			}
		})
	}
}
