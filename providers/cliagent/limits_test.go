package cliagent

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// reads counts the Read records of the looping fake.
func (r *recorder) reads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.tools {
		if rec.Name == "Read" {
			n++
		}
	}
	return n
}

func classOf(t *testing.T, err error) *providers.Error {
	t.Helper()
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a classified error", err)
	}
	return pe
}

func TestACLIThatLoopsOnToolsIsStoppedPastItsToolCallLimit(t *testing.T) {
	h := newHarness(t, "loop")
	req := h.request()
	req.MaxToolCalls = 5
	_, u, err := h.step(req)
	pe := classOf(t, err)
	if pe.Class != providers.ClassToolCalls || !strings.Contains(pe.Message, "max_tool_calls_per_step of 5") {
		t.Fatalf("err = %v (%s), want a tool_calls error naming the limit", err, pe.Class)
	}
	// Stopped at the call past the limit: the fake's next turn waits for
	// the provider to record this one, so a run that ends its CLI as soon
	// as a limit trips records 6, one that reads on first 7 at most.
	if n := h.rec.reads(); n < 6 || n > 7 {
		t.Fatalf("%d tool calls recorded, want 6 (within one turn of the limit of 5)", n)
	}
	if u.Input < 6000 || u.CostUSD == nil || *u.CostUSD <= 0 {
		t.Fatalf("usage = %+v, want what the loop spent, priced", u)
	}
	assertGone(t, pidsOf(t, h.ws, nil))
}

func TestATokenBudgetStopsTheCLIWithinATurn(t *testing.T) {
	h := newHarness(t, "loop")
	req := h.request()
	req.TokenBudget = 5000 // 1,100 tokens a turn: the fifth turn passes it
	_, u, err := h.step(req)
	if pe := classOf(t, err); pe.Class != providers.ClassBudget || !strings.Contains(pe.Message, "token_budget") {
		t.Fatalf("err = %v (%s), want a budget error", err, pe.Class)
	}
	if u.Tokens() < 5000 || u.Tokens() > 5000+2*1100 {
		t.Fatalf("stopped at %d tokens, want within a turn of 5,000", u.Tokens())
	}
	assertGone(t, pidsOf(t, h.ws, nil))
}

// sessionSpend stands in for coordination's budget: the session has spent
// already, and the step may spend up to what is left.
type sessionSpend struct {
	mu      sync.Mutex
	already float64
	budget  float64
}

func (s *sessionSpend) Used(u providers.Usage) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.CostUSD != nil && s.already+*u.CostUSD >= s.budget {
		return fmt.Sprintf("took the session past its cost_budget_usd of $%.2f", s.budget)
	}
	return ""
}

func TestACLIThatWouldTakeTheSessionPastItsCostBudgetIsStopped(t *testing.T) {
	h := newHarness(t, "loop") // claude-opus-4-6: a turn here costs about $0.0075
	req := h.request()
	spend := &sessionSpend{already: 0.95, budget: 1}
	req.Spend = spend
	_, u, err := h.step(req)
	pe := classOf(t, err)
	if pe.Class != providers.ClassBudget || !strings.Contains(pe.Message, "cost_budget_usd of $1.00") {
		t.Fatalf("err = %v (%s), want the session's budget in the error", err, pe.Class)
	}
	if u.CostUSD == nil || *u.CostUSD < 0.05 || *u.CostUSD > 0.05+2*0.0075 {
		t.Fatalf("the step's cost %v, want within a turn of the $0.05 left", u.CostUSD)
	}
	if n := h.rec.reads(); n > 10 {
		t.Fatalf("%d turns ran; the budget binds within one", n)
	}
	assertGone(t, pidsOf(t, h.ws, nil))
}

func TestWorkflowCallsThatDoNotLandCountAsToolCalls(t *testing.T) {
	h := newHarness(t, "badcalls")
	req := h.request()
	req.MaxToolCalls = 3
	_, _, err := h.step(req)
	if pe := classOf(t, err); pe.Class != providers.ClassToolCalls {
		t.Fatalf("err = %v (%s), want tool_calls", err, pe.Class)
	}
	if got := strings.Count(h.rec.text.String(), "content is empty"); got > 4 {
		t.Fatalf("%d refused calls heard; the fourth should have stopped the run", got)
	}
}
