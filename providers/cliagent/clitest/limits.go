package clitest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// Budget stands in for coordination's view of a session's cost budget
// (providers.Spend): Left dollars remain for this step.
type Budget struct {
	Left  float64
	mu    sync.Mutex
	heard int
}

// Used implements providers.Spend.
func (b *Budget) Used(u providers.Usage) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heard++
	if u.CostUSD != nil && *u.CostUSD >= b.Left {
		return fmt.Sprintf("would take the session past its cost_budget_usd ($%.4f left, $%.4f spent)", b.Left, *u.CostUSD)
	}
	return ""
}

// Heard is how often the step reported its usage.
func (b *Budget) Heard() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.heard
}

// AssertStopped checks that a looping step ended as an error of class, with
// its usage (known when the CLI reports usage per model call, else unknown,
// never a known zero), and returns the tool calls the recorder heard.
func AssertStopped(t testing.TB, err error, class providers.Class, u providers.Usage, perCall bool, rec *Recorder) int {
	t.Helper()
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != class {
		t.Fatalf("err = %v, want a %s error", err, class)
	}
	if perCall && (u.Tokens() == 0 || u.CostUSD == nil) {
		t.Fatalf("the stopped step lost its usage: %+v", u)
	}
	if !perCall && u.Tokens() == 0 && u.CostUSD != nil {
		t.Fatalf("a step stopped before its CLI reported usage claims a known cost of $%g", *u.CostUSD)
	}
	n := 0
	for _, r := range rec.Tools {
		if r.Kind != "web_search" {
			n++
		}
	}
	return n
}

// Cost is a usage's cost for a log line.
func Cost(u providers.Usage) string {
	if u.CostUSD == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *u.CostUSD)
}

// AssertPastTheToolLimit fails unless a looping step ran its limit of tool
// calls plus the one that passed it (a CLI reports its own calls once they
// ran, so the stop comes at the call past the limit; a second may share its
// turn).
func AssertPastTheToolLimit(t testing.TB, n, limit int) {
	t.Helper()
	if n < limit+1 || n > limit+2 {
		t.Fatalf("%d tool calls ran, want the limit of %d plus the one that passed it", n, limit)
	}
}

// AssertWithinCallsOfTheBudget fails unless a step stopped by the budget
// spent what was left and at most calls model calls (each costing call)
// more.
func AssertWithinCallsOfTheBudget(t testing.TB, u providers.Usage, left, call float64, calls int) {
	t.Helper()
	if u.CostUSD == nil || *u.CostUSD < left || *u.CostUSD > left+float64(calls)*call {
		t.Fatalf("spent %s, want within %d model call(s) of $%.4f of the $%.4f left", Cost(u), calls, call, left)
	}
}

// Loop is a replayed stream of model calls whose usage is reported as zero
// or not at all: Start, then Call(i) for each call, then End.
type Loop struct {
	Start, End []string
	Call       func(i int) []string
}

// Lines is the stream of a loop of n calls.
func (l Loop) Lines(n int) []string {
	lines := append([]string(nil), l.Start...)
	for i := range n {
		lines = append(lines, l.Call(i)...)
	}
	return append(lines, l.End...)
}

// AssertALoopReportingNoUsageIsStoppedByItsTokenBudget replays loop with
// one model call and with calls of them, and fails unless the longer run
// is charged the input of the one-call run for each call its stream shows
// (shown: a stream that tells its calls apart; else once), and unless,
// replayed again without its End under a token budget of half that charge,
// it is stopped by the budget and charged at least what stopped it. The
// End is left out because a replayed stream is read to its end whatever
// stops the step, and its final usage event, zeros, would let a budget
// heard only at a report stop it there: without it only what is counted
// mid-run can.
func AssertALoopReportingNoUsageIsStoppedByItsTokenBudget(t *testing.T, cli cliagent.CLI, loop Loop, calls int, shown bool) {
	t.Helper()
	_, _, one, _ := Replayed(t, cli, loop.Lines(1)...)
	_, _, u, _ := Replayed(t, cli, loop.Lines(calls)...)
	want := one.Input
	if shown {
		want *= int64(calls)
	}
	if one.Input == 0 || u.Input < want || !u.CostEstimated {
		t.Fatalf("charged %+v for a run of %d model calls, %d input tokens for one; want at least %d input tokens, marked cost_estimated", u, calls, one.Input, want)
	}
	budget := u.Tokens() / 2
	unended := loop
	unended.End = nil
	_, _, stopped, err := ReplayedWith(t, cli, func(r *providers.Request) { r.TokenBudget = budget }, unended.Lines(calls)...)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassBudget {
		t.Fatalf("err = %v under a token budget of %d (the whole run is charged %d); want a budget error", err, budget, u.Tokens())
	}
	if stopped.Tokens() < budget {
		t.Fatalf("charged %+v, less than the %d tokens that stopped it", stopped, budget)
	}
}

// AssertChargedWhatTheServerReported fails unless a step whose server
// reported per for each of its model calls was charged exactly that for
// some number of them: no estimate in place of a count the server reported,
// none on top of it, and not marked cost_estimated. It returns how many
// calls the charge is.
func AssertChargedWhatTheServerReported(t testing.TB, u providers.Usage, per fake.Usage) int64 {
	t.Helper()
	calls := u.Input / per.Input
	want := providers.Usage{Input: calls * per.Input, CachedInput: calls * per.CachedInput, Output: calls * per.Output, Reasoning: calls * per.Reasoning}
	got := u
	got.CostUSD = nil
	if calls == 0 || got != want || u.CostUSD == nil {
		t.Fatalf("charged %+v; want what the server reported for some number of model calls (%+v a call), priced, not an estimate", u, per)
	}
	return calls
}

// AssertChargedWhatTheServerReportedWithinABudget runs a step of a real CLI
// against a server reporting per for each model call (run, with set
// applied to its request), then again under a token and a cost budget the
// first run just fits: both must be charged what the server reported, the
// same number of calls, so an estimate counted before a report is never
// added to it, kept in its place, or stops a run its real usage fits.
func AssertChargedWhatTheServerReportedWithinABudget(t testing.TB, per fake.Usage, run func(set func(*providers.Request)) providers.Usage) {
	t.Helper()
	u := run(func(*providers.Request) {})
	calls := AssertChargedWhatTheServerReported(t, u, per)
	t.Logf("charged %d model calls: %+v, %s", calls, u, Cost(u))
	fits := run(func(r *providers.Request) {
		r.TokenBudget = u.Tokens() + 1 // at the budget is past it
		r.Spend = &Budget{Left: *u.CostUSD * 1.0001}
	})
	if AssertChargedWhatTheServerReported(t, fits, per) != calls {
		t.Fatalf("under a budget it fits, charged %+v; want %+v as without one", fits, u)
	}
}
