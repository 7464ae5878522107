package chatapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen-go/massgen-mcp/chatapi"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// failingScript writes a sim script whose agent fails with class every
// call, its provider asking to wait retryAfter seconds (0: it said nothing),
// and returns its spec.
func failingScript(t *testing.T, class string, retryAfter float64) string {
	t.Helper()
	act := map[string]any{"action": "error", "class": class}
	if retryAfter > 0 {
		act["retry_after"] = retryAfter
	}
	var acts []any
	for range 8 {
		acts = append(acts, act)
	}
	data, _ := json.Marshal(acts)
	f := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return "sim/script:file=" + f
}

// TestAnUpstreamRateLimitOrOutageSaysWhenToRetry: a run its providers
// rate-limited (429) or found unavailable (503) says when to try again,
// as OpenAI's clients read it (retry-after-ms first, then Retry-After): the
// longest wait a provider asked of the run's agents, else
// chatapi.UpstreamRetry. Before, neither carried a wait, and the SDKs
// retried after their own half-second backoff, into the same limit. A
// provider's wait is untrusted: past an hour (MaxUpstreamRetry) it is
// passed on as an hour.
func TestAnUpstreamRateLimitOrOutageSaysWhenToRetry(t *testing.T) {
	def := fmt.Sprint(int(chatapi.UpstreamRetry.Seconds()))
	for _, tc := range []struct {
		name             string
		a, b             string
		aWait, bWait     float64
		status           int
		code             string
		retryAfter, inMS string // "" for no header
	}{
		{"rate limit with the provider's wait", "rate_limit", "rate_limit", 12, 40.5, http.StatusTooManyRequests, "upstream_rate_limited", "41", "40500"},
		{"rate limit without one", "rate_limit", "rate_limit", 0, 0, http.StatusTooManyRequests, "upstream_rate_limited", def, def + "000"},
		{"outage with the provider's wait", "overloaded", "provider", 7, 0, http.StatusServiceUnavailable, "upstream_unavailable", "7", "7000"},
		{"outage without one", "timeout", "overloaded", 0, 0, http.StatusServiceUnavailable, "upstream_unavailable", def, def + "000"},
		{"a provider's wait of days, passed on as at most an hour", "rate_limit", "rate_limit", 864000, 0, http.StatusTooManyRequests, "upstream_rate_limited", "3600", "3600000"},
		{"a refused key which no wait mends", "auth", "auth", 5, 5, http.StatusBadGateway, "upstream_auth_failed", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			team := fmt.Sprintf("agents: [{model: '%s'}, {model: '%s'}]\n", failingScript(t, tc.a, tc.aWait), failingScript(t, tc.b, tc.bWait))
			s := serveTeams(t, mcp.Options{}, mcp.HTTPOptions{}, nil, map[string]string{"t.yaml": team})
			c := s.client(tokenA)
			_, err := c.Chat.Completions.New(context.Background(), ask("massgen/t", "What is 6 * 7?"))
			apiErr := wantAPIError(t, tc.name, err, tc.status, tc.code)
			h := apiErr.Response.Header
			if got := h.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if got := h.Get("Retry-After-Ms"); got != tc.inMS {
				t.Errorf("retry-after-ms %q, want %q", got, tc.inMS)
			}
		})
	}
}

// TestTheOpenAIClientWaitsAsTheUpstreamAsked: openai-go, retries on, waits
// the provider's wait that the 429 passes on before it sends the request
// again (its own backoff is half a second), and the retry runs the team
// again.
func TestTheOpenAIClientWaitsAsTheUpstreamAsked(t *testing.T) {
	const wait = 2.0
	team := fmt.Sprintf("agents: [{model: '%s'}, {model: '%s'}]\n", failingScript(t, "rate_limit", wait), failingScript(t, "rate_limit", wait))
	s := serveTeams(t, mcp.Options{}, mcp.HTTPOptions{}, nil, map[string]string{"t.yaml": team})
	var sent []time.Time
	c := openai.NewClient(option.WithBaseURL(s.url+"/v1"), option.WithAPIKey(tokenA), option.WithMaxRetries(1),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			sent = append(sent, time.Now())
			return next(r)
		}))
	_, err := c.Chat.Completions.New(context.Background(), ask("massgen/t", "What is 6 * 7?"))
	wantAPIError(t, "a rate-limited run", err, http.StatusTooManyRequests, "upstream_rate_limited")
	if len(sent) != 2 {
		t.Fatalf("the client sent %d requests, want 2 (one retry)", len(sent))
	}
	// The first request's run takes some time itself; the wait is between
	// its answer and the second request, so the gap is at least the wait.
	if gap := sent[1].Sub(sent[0]); gap < time.Duration(wait*float64(time.Second)) {
		t.Errorf("the client retried %s after its first request, want at least the provider's %gs", gap, wait)
	}
}

// TestAGuardsOutageSaysWhenToRetry: a 503 of the guards in front of the
// surface (a tenant whose store cannot be opened) says when to try again,
// as a 429 of theirs already did (they set Retry-After themselves, which
// is kept).
func TestAGuardsOutageSaysWhenToRetry(t *testing.T) {
	w := httptest.NewRecorder()
	chatapi.Refuse(w, http.StatusServiceUnavailable, "tenant b's store cannot be opened")
	if got, want := w.Header().Get("Retry-After"), fmt.Sprint(int(chatapi.StoreRetry.Seconds())); got != want {
		t.Errorf("503: Retry-After %q, want %q", got, want)
	}
	w = httptest.NewRecorder()
	w.Header().Set("Retry-After", "3")
	chatapi.Refuse(w, http.StatusTooManyRequests, "too many calls")
	if got := w.Header().Get("Retry-After"); got != "3" {
		t.Errorf("429: Retry-After %q, want the guard's 3", got)
	}
	if got := w.Header().Get("Retry-After-Ms"); got != "" {
		t.Errorf("429: retry-after-ms %q beside the guard's Retry-After, which the SDKs would read first", got)
	}
}
