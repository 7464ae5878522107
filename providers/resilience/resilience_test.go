package resilience

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// scripted fails with the given errors in turn, then succeeds; every call
// reports one input token and a cost of 0.01.
type scripted struct {
	mu    sync.Mutex
	errs  []error
	calls int
}

func (s *scripted) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	cost := 0.01
	u := providers.Usage{Input: 1, CostUSD: &cost}
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return providers.Action{}, u, err
	}
	return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall("ok")}}, u, nil
}

func (s *scripted) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls }

func failTimes(n int, err error) *scripted {
	s := &scripted{}
	for range n {
		s.errs = append(s.errs, err)
	}
	return s
}

// fakeSleep records the waits and returns at once.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func opts(f *fakeSleep) Options {
	return Options{Sleep: f.sleep, Breakers: NewBreakers(BreakerSettings{Failures: 1000})}
}

func perr(class providers.Class, status int) error {
	return &providers.Error{Class: class, Status: status, Message: string(class) + " failure"}
}

func TestRetriesTransientFailuresOnly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		calls int
	}{
		{"rate limit 429", perr(providers.ClassRateLimit, 429), 4},
		{"overloaded 529", perr(providers.ClassOverloaded, 529), 4},
		{"overloaded mid-stream, no status", perr(providers.ClassOverloaded, 0), 4},
		{"server error 500", perr(providers.ClassProvider, 500), 4},
		{"bad gateway 502", perr(providers.ClassProvider, 502), 4},
		{"network, no status", perr(providers.ClassProvider, 0), 4},
		{"unclassified transport error", errors.New("connection reset by peer"), 4},
		{"gateway timeout 504", perr(providers.ClassTimeout, 504), 4},
		{"stall without status", perr(providers.ClassTimeout, 0), 1},
		{"bad request 400", perr(providers.ClassProvider, 400), 1},
		{"not found 404", perr(providers.ClassProvider, 404), 1},
		{"auth 401", perr(providers.ClassAuth, 401), 1},
		{"quota: insufficient_quota 429", perr(providers.ClassQuota, 429), 1},
		{"bad output", perr(providers.ClassBadOutput, 0), 1},
		{"context deadline", context.DeadlineExceeded, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := failTimes(10, tc.err)
			_, u, err := Wrap(p, "openai", opts(&fakeSleep{})).Step(context.Background(), providers.Request{})
			if err == nil {
				t.Fatal("want the failure")
			}
			if p.count() != tc.calls {
				t.Errorf("%d calls, want %d", p.count(), tc.calls)
			}
			if providers.ClassOf(err) != providers.ClassOf(tc.err) {
				t.Errorf("class %s, want %s", providers.ClassOf(err), providers.ClassOf(tc.err))
			}
			if u.Input != int64(tc.calls) {
				t.Errorf("usage of failed attempts lost: %+v", u)
			}
			if tc.calls > 1 && !strings.Contains(err.Error(), "gave up after 4 attempts") {
				t.Errorf("message does not say it gave up: %q", err)
			}
		})
	}
}

func TestRecoveryReturnsTheActionAndSumsEveryAttempt(t *testing.T) {
	p := failTimes(2, perr(providers.ClassOverloaded, 503))
	f := &fakeSleep{}
	act, u, err := Wrap(p, "gemini", opts(f)).Step(context.Background(), providers.Request{})
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("got %v, %v", act, err)
	}
	if p.count() != 3 || u.Input != 3 || u.CostUSD == nil || *u.CostUSD < 0.0299 || *u.CostUSD > 0.0301 {
		t.Errorf("calls %d, usage %+v", p.count(), u)
	}
	// Jittered exponential waits: 500ms ±50%, then 1s ±50%.
	if len(f.waits) != 2 || f.waits[0] < 250*time.Millisecond || f.waits[0] > 750*time.Millisecond ||
		f.waits[1] < 500*time.Millisecond || f.waits[1] > 1500*time.Millisecond {
		t.Errorf("waits %v", f.waits)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	p := &scripted{errs: []error{
		&providers.Error{Class: providers.ClassRateLimit, Status: 429, RetryAfter: 7 * time.Second},
		&providers.Error{Class: providers.ClassRateLimit, Status: 429, RetryAfter: 46 * time.Second}, // Gemini's retryDelay
	}}
	f := &fakeSleep{}
	if _, _, err := Wrap(p, "claude", opts(f)).Step(context.Background(), providers.Request{}); err != nil {
		t.Fatal(err)
	}
	if len(f.waits) != 2 || f.waits[0] != 7*time.Second || f.waits[1] != 46*time.Second {
		t.Errorf("waits %v, want [7s 46s]", f.waits)
	}
}

func TestRetryAfterBeyondTheCapFailsNow(t *testing.T) {
	p := failTimes(5, &providers.Error{Class: providers.ClassRateLimit, Status: 429, RetryAfter: 10 * time.Minute, Message: "slow down"})
	f := &fakeSleep{}
	_, _, err := Wrap(p, "claude", opts(f)).Step(context.Background(), providers.Request{})
	if p.count() != 1 || len(f.waits) != 0 {
		t.Fatalf("calls %d waits %v", p.count(), f.waits)
	}
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassRateLimit || pe.RetryAfter != 10*time.Minute || !strings.Contains(err.Error(), "asked to wait 10m0s") {
		t.Errorf("got %#v", err)
	}
}

func TestAuthAndQuotaSayWhichKeyToCheck(t *testing.T) {
	o := opts(&fakeSleep{})
	o.KeyHint = "OPENAI_API_KEY (from ./.env)"
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{perr(providers.ClassAuth, 401), []string{"OPENAI_API_KEY (from ./.env)", "valid"}},
		{perr(providers.ClassQuota, 429), []string{"OPENAI_API_KEY (from ./.env)", "retrying will not help", "billing"}},
	} {
		p := failTimes(3, tc.err)
		_, _, err := Wrap(p, "openai", o).Step(context.Background(), providers.Request{})
		if p.count() != 1 {
			t.Errorf("%s retried", providers.ClassOf(tc.err))
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Status != tc.err.(*providers.Error).Status {
			t.Errorf("status lost: %#v", err)
		}
	}
}

func TestNeverRetriesOnceTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := failTimes(5, perr(providers.ClassRateLimit, 429))
	f := &fakeSleep{}
	if _, _, err := Wrap(p, "grok", opts(f)).Step(ctx, providers.Request{}); err == nil {
		t.Fatal("want an error")
	}
	if p.count() != 1 || len(f.waits) != 0 {
		t.Errorf("calls %d waits %v", p.count(), f.waits)
	}
}

func TestCancelStopsTheWait(t *testing.T) {
	p := failTimes(5, &providers.Error{Class: providers.ClassRateLimit, RetryAfter: 30 * time.Second})
	o := Options{Breakers: NewBreakers(BreakerSettings{})} // the real sleep
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := Wrap(p, "grok", o).Step(ctx, providers.Request{})
	if time.Since(start) > 5*time.Second {
		t.Fatal("the wait was not cut short")
	}
	if !errors.Is(err, context.Canceled) || providers.ClassOf(err) != providers.ClassRateLimit {
		t.Errorf("got %v (class %s)", err, providers.ClassOf(err))
	}
}

func TestNoWaitPastTheDeadline(t *testing.T) {
	p := failTimes(5, &providers.Error{Class: providers.ClassOverloaded, RetryAfter: 20 * time.Second, Message: "overloaded"})
	f := &fakeSleep{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := Wrap(p, "claude", opts(f)).Step(ctx, providers.Request{})
	if p.count() != 1 || len(f.waits) != 0 || providers.ClassOf(err) != providers.ClassOverloaded || !strings.Contains(err.Error(), "time runs out") {
		t.Errorf("calls %d waits %v err %v", p.count(), f.waits, err)
	}
}

func TestBreakerOpensFailsFastAndHalfOpens(t *testing.T) {
	// Open for a second, not 60 ms: the checks that it is open run on the
	// real clock, and a loaded machine can spend 60 ms between two lines.
	// The half-open state is waited for, bounded, below.
	br := NewBreakers(BreakerSettings{Failures: 3, OpenFor: time.Second})
	o := Options{Sleep: (&fakeSleep{}).sleep, Breakers: br, MaxAttempts: 1}
	p := failTimes(3, perr(providers.ClassProvider, 503))
	w := Wrap(p, "openai", o)
	for range 3 {
		w.Step(context.Background(), providers.Request{})
	}
	if br.State("openai") != "open" {
		t.Fatalf("state %s after 3 failures", br.State("openai"))
	}
	// A second agent on the same backend shares the breaker.
	other := &scripted{}
	_, u, err := Wrap(other, "openai", o).Step(context.Background(), providers.Request{})
	if other.count() != 0 {
		t.Fatal("an open breaker let a call through")
	}
	if providers.ClassOf(err) != providers.ClassOverloaded || !strings.Contains(err.Error(), "failing repeatedly") ||
		!strings.Contains(err.Error(), "paused until") || !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "provider failure") {
		t.Errorf("refusal: %v", err)
	}
	if u.CostUSD == nil || *u.CostUSD != 0 || u.Tokens() != 0 {
		t.Errorf("a refused call costs nothing, known: %+v", u)
	}
	// Another backend is unaffected.
	if _, _, err := Wrap(&scripted{}, "claude", o).Step(context.Background(), providers.Request{}); err != nil {
		t.Errorf("claude refused: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); br.State("openai") != "half-open" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if br.State("openai") != "half-open" {
		t.Fatalf("state %s after the open period", br.State("openai"))
	}
	if _, _, err := w.Step(context.Background(), providers.Request{}); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if br.State("openai") != "closed" {
		t.Errorf("state %s after a good probe", br.State("openai"))
	}
}

func TestFailedProbeReopens(t *testing.T) {
	// Open for a second, not 30 ms, so that a loaded machine cannot let the
	// reopened breaker half-open again before the check; the first
	// half-open state is waited for, bounded, instead of slept for.
	br := NewBreakers(BreakerSettings{Failures: 1, OpenFor: time.Second})
	o := Options{Sleep: (&fakeSleep{}).sleep, Breakers: br, MaxAttempts: 1}
	w := Wrap(failTimes(2, perr(providers.ClassOverloaded, 529)), "claude", o)
	w.Step(context.Background(), providers.Request{})
	for deadline := time.Now().Add(10 * time.Second); br.State("claude") != "half-open" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if br.State("claude") != "half-open" {
		t.Fatalf("state %s after the open period, want half-open", br.State("claude"))
	}
	w.Step(context.Background(), providers.Request{})
	if br.State("claude") != "open" {
		t.Errorf("state %s after a failed probe", br.State("claude"))
	}
}

func TestRetriesCountAgainstTheBreakerAndStopWhenItOpens(t *testing.T) {
	br := NewBreakers(BreakerSettings{Failures: 2, OpenFor: time.Minute})
	p := failTimes(10, perr(providers.ClassRateLimit, 429))
	_, u, err := Wrap(p, "groq", Options{Sleep: (&fakeSleep{}).sleep, Breakers: br}).Step(context.Background(), providers.Request{})
	if p.count() != 2 || u.Input != 2 {
		t.Errorf("calls %d usage %+v", p.count(), u)
	}
	if !strings.Contains(err.Error(), "failing repeatedly") || !strings.Contains(err.Error(), "rate_limit failure") {
		t.Errorf("got %v", err)
	}
}

func TestCallerFaultsDoNotTripTheBreaker(t *testing.T) {
	br := NewBreakers(BreakerSettings{Failures: 2, OpenFor: time.Minute})
	o := Options{Sleep: (&fakeSleep{}).sleep, Breakers: br}
	for _, err := range []error{perr(providers.ClassAuth, 401), perr(providers.ClassQuota, 429), perr(providers.ClassBadOutput, 0),
		perr(providers.ClassProvider, 400), context.Canceled, perr(providers.ClassAuth, 403)} {
		Wrap(failTimes(1, err), "deepseek", o).Step(context.Background(), providers.Request{})
	}
	if br.State("deepseek") != "closed" {
		t.Errorf("state %s", br.State("deepseek"))
	}
}

func TestBreakersAreKeyedByBackendBaseURLAndTenant(t *testing.T) {
	br := NewBreakers(BreakerSettings{Failures: 1, OpenFor: time.Minute})
	dead := failTimes(5, perr(providers.ClassProvider, 503))
	o := Options{Sleep: (&fakeSleep{}).sleep, Breakers: br, MaxAttempts: 1, BaseURL: "http://127.0.0.1:9/v1", Tenant: "alice"}
	_, _, _ = Wrap(dead, "openai", o).Step(context.Background(), providers.Request{})
	if s := br.StateOf(Key{Backend: "openai", BaseURL: "http://127.0.0.1:9/v1", Tenant: "alice"}); s != "open" {
		t.Fatalf("the failing URL's breaker is %s", s)
	}
	for _, k := range []Key{{Backend: "openai"}, {Backend: "openai", BaseURL: "http://127.0.0.1:9/v1", Tenant: "bob"}, {Backend: "openai", Tenant: "alice"}} {
		if s := br.StateOf(k); s != "closed" {
			t.Errorf("breaker %+v is %s: one tenant's dead URL paused it", k, s)
		}
	}
}

// TestARetrysSpendReportsCountTheAttemptsBeforeIt: a step whose tool loop
// reported $0.30 before it failed overloaded is retried; the retry's loop
// reports its own usage from nothing, and the session's Spend hears it on
// top of the failed attempt's $0.30 + $0.01. Before, the step's spend in
// flight (on its lock's row, for another replica to inherit) fell back to
// the retry's own.
func TestARetrysSpendReportsCountTheAttemptsBeforeIt(t *testing.T) {
	usd := func(f float64) *float64 { return &f }
	calls := 0
	loop := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		calls++
		req.Spend.Used(providers.Usage{Input: 100, CostUSD: usd(0.3)})
		if calls == 1 {
			return providers.Action{}, providers.Usage{Input: 110, CostUSD: usd(0.31)}, perr(providers.ClassOverloaded, 529)
		}
		return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall("ok")}}, providers.Usage{Input: 110, CostUSD: usd(0.31)}, nil
	})
	var heard []float64
	spend := providers.SpendFunc(func(u providers.Usage) string {
		heard = append(heard, *u.CostUSD)
		return ""
	})
	if _, _, err := Wrap(loop, "openai", opts(&fakeSleep{})).Step(context.Background(), providers.Request{Spend: spend}); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 3 || heard[0] != 0.3 || heard[1] != 0.31 || heard[2] < 0.6099 || heard[2] > 0.6101 {
		t.Fatalf("the Spend heard %v; want $0.30, then $0.31 (the failed attempt's, asked before the retry), then $0.61 (that and the retry's $0.30)", heard)
	}
}

// TestNoRetryOnceTheSessionsBudgetIsSpent: a step that failed overloaded
// is not retried when the session's Spend says its budget is spent; it
// ends with a budget error and the failed attempt's usage. Before, the
// retry was made and paid for whatever the budget said.
func TestNoRetryOnceTheSessionsBudgetIsSpent(t *testing.T) {
	p := failTimes(1, perr(providers.ClassOverloaded, 529))
	var heard []providers.Usage
	spend := providers.SpendFunc(func(u providers.Usage) string {
		heard = append(heard, u)
		return "would take the session past its cost_budget_usd of $0.01 ($0.0100 spent with the steps in flight)"
	})
	f := &fakeSleep{}
	_, u, err := Wrap(p, "openai", opts(f)).Step(context.Background(), providers.Request{Spend: spend})
	if providers.ClassOf(err) != providers.ClassBudget || !strings.Contains(err.Error(), "not retried") {
		t.Fatalf("a retry over the budget: %v; want a budget error saying it was not retried", err)
	}
	if p.count() != 1 || len(f.waits) != 0 {
		t.Errorf("the provider was called %d times after %d waits; want once, no wait", p.count(), len(f.waits))
	}
	if u.CostUSD == nil || *u.CostUSD != 0.01 || len(heard) != 1 || heard[0].Input != 1 {
		t.Errorf("usage %+v, Spend heard %+v; want the failed attempt's $0.01, told to the Spend once", u, heard)
	}
}

// TestBeforeRetryIsAskedBeforeEachRetry: a caller whose every try must fit
// its budget (a criteria call) is asked before each retry with what the
// tries so far spent; its refusal ends the call with a budget error, the
// tries' usage kept, and no further try or wait.
func TestBeforeRetryIsAskedBeforeEachRetry(t *testing.T) {
	p := failTimes(3, perr(providers.ClassRateLimit, 429))
	var heard []int64
	before := func(u providers.Usage) string {
		heard = append(heard, u.Input)
		if u.Input >= 2 {
			return "the budget cannot pay for another try"
		}
		return ""
	}
	f := &fakeSleep{}
	_, u, err := Wrap(p, "openai", opts(f)).Step(context.Background(), providers.Request{BeforeRetry: before})
	if providers.ClassOf(err) != providers.ClassBudget || !strings.Contains(err.Error(), "not retried: the budget cannot pay for another try") {
		t.Fatalf("a retry its caller refused: %v; want a budget error with the caller's reason", err)
	}
	if p.count() != 2 || len(f.waits) != 1 || len(heard) != 2 || heard[0] != 1 || heard[1] != 2 || u.Input != 2 {
		t.Errorf("%d tries, %d waits, BeforeRetry heard %v, usage %d tokens; want 2 tries, 1 wait, heard [1 2], 2 tokens", p.count(), len(f.waits), heard, u.Input)
	}
}
