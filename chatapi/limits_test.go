package chatapi_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// refusedSession is tenant's session asked task, read through its service.
func refusedSession(t *testing.T, s *served, tenant, task string) coordination.SessionSummary {
	t.Helper()
	s.mu.Lock()
	svc := s.services[tenant]
	s.mu.Unlock()
	list, err := svc.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range list {
		if strings.Contains(sum.Task, task) {
			return sum
		}
	}
	t.Fatalf("tenant %s has no session asked %q: %+v", tenant, task, list)
	return coordination.SessionSummary{}
}

// wantAPIError wants an OpenAI error with this status and code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("%s: %v, want an API error %d %s", what, err, status, code)
	}
	if apiErr.StatusCode != status || apiErr.Code != code {
		t.Errorf("%s: %d %s (%s), want %d %s", what, apiErr.StatusCode, apiErr.Code, apiErr.Message, status, code)
	}
	return apiErr
}

func TestTheMCPLimitsHoldHere(t *testing.T) {
	s := serveWith(t, mcp.Options{MaxRunsPerTenant: 1}, mcp.HTTPOptions{MaxBody: 4096})
	c := s.client(tokenA)

	_, err := c.Chat.Completions.New(context.Background(), ask("massgen", strings.Repeat("x", 5000)))
	wantAPIError(t, "a body over --max-body", err, http.StatusRequestEntityTooLarge, "request_too_large")

	// One run per tenant: a second team of a waits for none, it is refused.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Chat.Completions.New(ctx, ask("massgen/slow", "What is 6 * 7?"))
	}()
	waitRunning(t, s, "a")
	_, err = c.Chat.Completions.New(context.Background(), ask("massgen", "What is 17 * 23?"))
	refusal := wantAPIError(t, "a second run past --max-runs-per-tenant", err, http.StatusTooManyRequests, "too_many_runs")
	// It says when to try again: OpenAI's SDKs retry a 429 after the
	// Retry-After it names (Python's only up to 60 s), and without one at
	// once, while the team that holds the slot still runs.
	if secs, err := strconv.Atoi(refusal.Response.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
		t.Errorf("too_many_runs has Retry-After %q, want whole seconds from 1 to 60", refusal.Response.Header.Get("Retry-After"))
	}
	// And in words, as the web view's refused resume: which limit, what
	// frees a slot, and that the operator can raise it.
	if m := refusal.Message; !strings.Contains(m, "--max-runs-per-tenant") || !strings.Contains(m, "operator") || !strings.Contains(m, "call again in ") {
		t.Errorf("too_many_runs says %q; want the limit (--max-runs-per-tenant), that the server's operator can raise it, and when to call again", m)
	}
	// The session created for the refused request reads cancelled, saying
	// why: left running, it would read interrupted a minute on, and a
	// server resuming those would run what was refused.
	refused := refusedSession(t, s, "a", "What is 17 * 23?")
	if refused.Status != coordination.StatusCancelled {
		t.Errorf("the session of the refused request reads %s, want cancelled (not started)", refused.Status)
	}
	// Another tenant has its own cap.
	b := s.client(tokenB)
	if _, err := b.Chat.Completions.New(context.Background(), ask("massgen", "What is 17 * 23?")); err != nil {
		t.Errorf("tenant b refused by a's cap: %v", err)
	}
	cancel()
	<-done
}

func TestTheTenantsCallRateCountsCompletions(t *testing.T) {
	s := serveWith(t, mcp.Options{}, mcp.HTTPOptions{CallRate: 0.001, CallBurst: 1})
	c := s.client(tokenA)
	if _, err := c.Chat.Completions.New(context.Background(), ask("massgen", "What is 17 * 23?")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Chat.Completions.New(context.Background(), ask("massgen", "What is 17 * 23?"))
	wantAPIError(t, "a second completion past a burst of 1", err, http.StatusTooManyRequests, "rate_limit_exceeded")
	// Listing models is not a call.
	if _, err := c.Models.List(context.Background()); err != nil {
		t.Errorf("models refused by the call rate: %v", err)
	}
}

// TestAClientSetsNothingOperatorOnly: only the model name and the messages
// count; fields that would pick models or base URLs over MCP are read past,
// and the team is the operator's.
func TestAClientSetsNothingOperatorOnly(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	res, err := c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 17 * 23?"),
		option.WithJSONSet("models", []string{"openai/gpt-5@http://127.0.0.1:9/v1"}),
		option.WithJSONSet("team", "slow"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.service(t, "a").Result(context.Background(), metaOf(t, res.RawJSON()).SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, a := range r.Agents {
		models = append(models, a.Model)
	}
	if strings.Join(models, ",") != "sim/strong:accuracy=1,sim/strong:accuracy=1,sim:accuracy=1" {
		t.Errorf("the team ran %v, not the operator's quick team", models)
	}
}
