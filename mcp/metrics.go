package mcp

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
)

// metrics is the server's Prometheus registry, served at /metrics behind
// the same auth as /mcp, to the default tenant only (operatorOnly). Its
// own registry, not the global one, so two servers in one process (tests)
// never collide and nothing a library registers globally leaks out.
type metrics struct {
	reg   *prometheus.Registry
	tools *prometheus.HistogramVec
	steps *prometheus.CounterVec
	errs  *prometheus.CounterVec

	mu    sync.Mutex
	heard []*coordination.Subscription // every tenant service's landed entries
}

// toolBuckets span a team_status read (well under a millisecond) to a
// run_team that blocks for its whole wait limit (50 s).
var toolBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 60}

func newMetrics(ts *tenants) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		tools: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "massgen_tool_duration_seconds",
			Help:    "Time to answer an MCP tool call, by tool and outcome (ok or error).",
			Buckets: toolBuckets,
		}, []string{"tool", "outcome"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "massgen_steps_total",
			Help: "Steps landed in the ledger, by kind (answer, vote, error).",
		}, []string{"kind"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "massgen_provider_errors_total",
			Help: "Steps that ended in a provider error after retries, by class (rate_limit, overloaded, auth, quota, bad_output, timeout, provider, budget, tool_calls).",
		}, []string{"class"}),
	}
	runs := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "massgen_runs_active",
		Help: "Run loops (run_team) running in this process.",
	}, func() float64 {
		n := 0
		for _, svc := range ts.all() {
			n += svc.RunsActive()
		}
		return float64(n)
	})
	m.reg.MustRegister(m.tools, m.steps, m.errs, runs, breakerCollector{},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(storeCollectors(ts)...)
	// Every series from the start, so a rate over the first error works.
	for _, k := range []coordination.EntryKind{coordination.KindAnswer, coordination.KindVote, coordination.KindError} {
		m.steps.WithLabelValues(string(k))
	}
	for _, c := range []providers.Class{providers.ClassRateLimit, providers.ClassOverloaded, providers.ClassAuth, providers.ClassQuota,
		providers.ClassBadOutput, providers.ClassTimeout, providers.ClassProvider, providers.ClassBudget, providers.ClassToolCalls} {
		m.errs.WithLabelValues(string(c))
	}
	ts.mu.Lock()
	for _, svc := range ts.byID {
		m.hear(svc)
	}
	ts.opened = m.hear
	ts.mu.Unlock()
	return m
}

// hear subscribes to a service's landed entries, every one of them (an
// unbounded subscription): the counts are exact. They are counted when
// read — before every scrape and after every tool call (catchUp) — so no
// goroutine outlives the server, and what waits between two reads is what
// landed between them.
func (m *metrics) hear(svc *coordination.Service) {
	// Only a store's watch can fail, and this filter asks for none.
	sub, err := svc.Subscribe(context.Background(), coordination.Filter{Kinds: []coordination.ObservationKind{coordination.ObservedEntry}})
	if err != nil {
		panic(fmt.Sprintf("mcp: the metrics cannot hear a service: %v", err))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.heard = append(m.heard, sub)
}

// catchUp counts the entries landed since the last count.
func (m *metrics) catchUp() {
	m.mu.Lock()
	heard := m.heard
	m.mu.Unlock()
	for _, sub := range heard {
		for _, o := range sub.Take() {
			m.entry(*o.Entry)
		}
	}
}

// entry counts a landed step.
func (m *metrics) entry(e coordination.Entry) {
	m.steps.WithLabelValues(string(e.Kind)).Inc()
	if e.Kind == coordination.KindError {
		m.errs.WithLabelValues(string(e.Class)).Inc()
	}
}

// middleware times every tool call.
func (m *metrics) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		start := time.Now()
		res, err := next(ctx, req)
		m.catchUp()
		outcome := "ok"
		if err != nil || (res != nil && res.IsError) {
			outcome = "error"
		}
		m.tools.WithLabelValues(req.Params.Name, outcome).Observe(time.Since(start).Seconds())
		return res, err
	}
}

// handler serves the registry in the Prometheus text format, every entry
// landed before the scrape counted.
func (m *metrics) handler() http.Handler {
	serve := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.catchUp()
		serve.ServeHTTP(w, r)
	})
}

// breakerCollector reports the process's circuit breakers:
// massgen_breakers{backend, state} counts the breakers of each backend in
// each state (closed, half-open, open), so an alert can match state="open".
// Counts rather than one series per breaker: a breaker's key holds a tenant
// and a base URL, which must not reach another tenant's scrape.
type breakerCollector struct{}

var breakerDesc = prometheus.NewDesc("massgen_breakers",
	"Circuit breakers per backend and state (closed, half-open, open).",
	[]string{"backend", "state"}, nil)

var breakerStates = []string{"closed", "half-open", "open"}

func (breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

func (breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for backend, counts := range resilience.Shared().States() {
		for _, s := range breakerStates {
			ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, float64(counts[s]), backend, s)
		}
	}
}
