package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Token: "dummy-token-not-a-secret"}))
	defer ts.Close()
	c := inProcess(t, s, false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true}))
	if res.IsError {
		t.Fatal(text(res))
	}
	callTool(t, c, "team_status", `{"session_id": "no_such_session"}`)

	get := func(auth string) (int, string) { return scrape(t, ts.URL, auth) }
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get("Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	code, body := get("Bearer dummy-token-not-a-secret")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	if strings.Contains(body, "massgen_store_connections") {
		t.Errorf("/metrics reports connection pools of a store that has none:\n%s", grepLines(body, "massgen_store"))
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

// pooledStore is a memory store that reports connection pools, as the
// PostgreSQL store does.
type pooledStore struct{ *memstore.Store }

func (pooledStore) Pools() []coordination.PoolStats {
	return []coordination.PoolStats{
		{Name: "main", Max: 32, Total: 5, Acquired: 3, Idle: 2, WaitedAcquires: 7, AcquireWait: 1500 * time.Millisecond},
		{Name: "beats", Max: 4, Total: 1, Idle: 1},
	}
}

// /metrics carries what an operator of replicas alerts on: runs taken over
// from a dead holder, runs that lost their lease, waits on the store, and
// the store's connection pools.
func TestMetricsTellFailoversAndTheStoresPools(t *testing.T) {
	st := pooledStore{memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	s := New(svc, Options{})
	ctx := context.Background()
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	// A run that died: its lease, never released, expired.
	if _, err := st.AcquireRun(ctx, sess.ID, coordination.ThisProcess("dead-replica"), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	c := inProcess(t, s, false)
	if res := callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": sess.ID, "wait": true})); res.IsError {
		t.Fatal(text(res))
	}
	rec := httptest.NewRecorder()
	s.handler.metrics.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		"massgen_runs_taken_over_total 1",
		"massgen_runs_lease_lost_total 0",
		"massgen_store_waits_total 0",
		`massgen_store_connections_max{pool="main"} 32`,
		`massgen_store_connections{pool="main",state="acquired"} 3`,
		`massgen_store_connections{pool="beats",state="idle"} 1`,
		`massgen_store_acquire_waits_total{pool="main"} 7`,
		`massgen_store_acquire_wait_seconds_total{pool="main"} 1.5`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(body, "massgen_"))
		}
	}
}

// /metrics counts every tenant's runs and steps, so with a tokens file only
// the operator's token reads it: a tenant's would see when, and how much,
// the other tenants run.
func TestMetricsAnswerOnlyTheOperatorsToken(t *testing.T) {
	_, ts := tenantServer(t, nil)
	alice, _ := httpClient(t, ts.URL+"/mcp", false, bearer(aliceToken))
	if res := callTool(t, alice, "run_team", `{"task":"What is 2+2?","models":["sim","sim"],"wait":true}`); res.IsError {
		t.Fatal(text(res))
	}
	get := func(tok string) (int, string) { return scrape(t, ts.URL, "Bearer "+tok) }
	for _, tok := range []string{aliceToken, bobToken} {
		code, body := get(tok)
		if code != http.StatusForbidden || strings.Contains(body, "massgen_steps_total") {
			t.Errorf("/metrics with a tenant's token: %d, want 403 and no series:\n%.300s", code, body)
		}
		if !strings.Contains(body, "MASSGEN_MCP_TOKEN") {
			t.Errorf("the refusal does not say whose token reads /metrics: %s", body)
		}
	}
	code, body := get("dummy-default-token-not-a-secret")
	if code != http.StatusOK || !strings.Contains(body, `massgen_steps_total{kind="answer"}`) {
		t.Errorf("/metrics with the operator's token: %d\n%.300s", code, body)
	}
}

// scrape GETs the server's /metrics with auth as its Authorization header
// ("" sends none): the status and the body.
func scrape(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
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
