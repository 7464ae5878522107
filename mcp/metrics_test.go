package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// /metrics speaks the Prometheus text format, behind the same token as
// /mcp, and counts what the server did: tool latency per tool, steps by
// kind, runs active, breakers.
func TestMetricsCountToolsAndStepsBehindTheToken(t *testing.T) {
	s := newMemServer(t, Options{})
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Token: "s3cret-token"}))
	defer ts.Close()
	c := inProcess(t, s, false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true}))
	if res.IsError {
		t.Fatal(text(res))
	}
	callTool(t, c, "team_status", `{"session_id": "no_such_session"}`)

	get := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get("Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	code, body := get("Bearer s3cret-token")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	for _, want := range []string{
		`massgen_tool_duration_seconds_bucket{outcome="ok",tool="run_team",le=`,
		`massgen_tool_duration_seconds_count{outcome="error",tool="team_status"} 1`,
		`massgen_steps_total{kind="answer"}`,
		`massgen_steps_total{kind="vote"}`,
		"# TYPE massgen_runs_active gauge",
		"massgen_runs_active 0",
		"# TYPE massgen_provider_errors_total counter",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// A step that ends in a provider error is counted by its class.
func TestMetricsCountProviderErrorsByClass(t *testing.T) {
	open := func(sp providers.Spec) (providers.Provider, error) {
		if sp.Model == "overloaded" {
			return overloaded{}, nil
		}
		return backends.Open(sp)
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Logger: zerolog.Nop()})
	s := New(svc, Options{})
	m := s.handler.metrics
	c := inProcess(t, s, false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim/strong", "openai/overloaded", "sim"}, "wait": true}))
	if res.IsError {
		t.Fatal(text(res))
	}
	rec := httptest.NewRecorder()
	m.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `massgen_provider_errors_total{class="overloaded"} 2`) {
		t.Errorf("no provider error counted:\n%s", grepLines(rec.Body.String(), "massgen_"))
	}
}

// overloaded is a provider whose every call fails as overloaded.
type overloaded struct{}

func (overloaded) Step(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
	return providers.Action{}, providers.Usage{}, &providers.Error{Class: providers.ClassOverloaded, Message: "overloaded"}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
