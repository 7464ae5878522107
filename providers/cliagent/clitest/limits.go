package clitest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
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
