package coordination_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// presentingPair is a two-agent team under a $1 budget with the present
// strategy, whose agents answer at once for step dollars each, and whose
// final call is final's (counted in calls).
func presentingPair(t *testing.T, step float64, final providers.Provider) (*coordtest.Harness, *coordination.Session, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose == providers.PurposePresent {
			calls.Add(1)
			return final.Step(ctx, req)
		}
		c := step
		return coordtest.Answer("Answer: 4 from " + req.AgentID), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
	})
	h := coordtest.New(t, map[string]providers.Provider{"openai/gpt-5-mini": p, "openai/gpt-5-nano": p})
	s := h.Create(coordination.TeamSpec{Models: []string{"openai/gpt-5-mini", "openai/gpt-5-nano"},
		Rules: coordination.Rules{CostBudgetUSD: new(1.0), Final: coordination.FinalPresent}})
	return h, s, &calls
}

// TestABudgetSpentBeforeTheFinalCallSkipsIt: two answers of $0.50 spend
// the session's $1 budget, which stops the run; the present strategy's
// final call is not made (it would only spend past the budget), and the
// session finishes with the winner's answer as it stands, the result's
// final_note and the timeline saying why. Before, the call was made after
// the budget stop, with no budget of its own.
func TestABudgetSpentBeforeTheFinalCallSkipsIt(t *testing.T) {
	h, s, calls := presentingPair(t, 0.5, providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		c := 0.5
		return coordtest.Answer("FINAL"), providers.Usage{Input: 1000, Output: 1000, CostUSD: &c}, nil
	}))
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || coordination.Deref(res.StopReason) != coordination.StopBudget || res.Winner == nil {
		t.Fatalf("want a finished budget stop with a winner: %s", coordtest.JSON(res))
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the final writer was called %d times; want none, the budget being spent", n)
	}
	if want := "Answer: 4 from " + res.Winner.AgentID; res.FinalAnswer == nil || *res.FinalAnswer != want {
		t.Errorf("final answer %q; want the winner's as it stands, %q", coordination.Deref(res.FinalAnswer), want)
	}
	if want := "the session's cost_budget_usd of $1.00 was spent before the final call ($1.0000); the winner's answer is used as is"; res.FinalNote != want {
		t.Errorf("final_note %q; want %q", res.FinalNote, want)
	}
	if res.CostUSD == nil || *res.CostUSD != 1.0 {
		t.Errorf("cost $%.4f; want the two steps' $1.00", dollars(res.CostUSD))
	}
	wantFinalSkipped(t, h, s.ID, "no present call: the session's cost_budget_usd of $1.00 was spent")
}

// wantFinalSkipped fails t unless session id's timeline has a final_skipped
// event whose message holds says.
func wantFinalSkipped(t *testing.T, h *coordtest.Harness, id, says string) {
	t.Helper()
	events, err := h.Service.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e coordination.Event) bool {
		return e.Type == "final_skipped" && strings.Contains(e.Message, says)
	}) {
		t.Errorf("the timeline does not say the final call was skipped (%q): %+v", says, events)
	}
}

// TestAFinalWriterOverBudgetMidCallIsStopped: two answers of $0.45 leave
// $0.10 of the $1 budget, too little for another step, so the run stops by
// budget with room for its final call. The writer is a CLI agent that
// loops at $0.02 a turn, reporting each to its Spend, as steps do; it is
// stopped once the session's spend meets the budget, and the winner's
// answer is used, its spend recorded. Before, the final call had no Spend
// and looped for its 200 turns ($4).
func TestAFinalWriterOverBudgetMidCallIsStopped(t *testing.T) {
	const turn = 0.02
	h, s, calls := presentingPair(t, 0.45, loopingCLIEvery(turn, time.Millisecond))
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || coordination.Deref(res.StopReason) != coordination.StopBudget || res.Winner == nil {
		t.Fatalf("want a finished budget stop with a winner: %s", coordtest.JSON(res))
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the final writer was called %d times; want once, the budget having room for it", n)
	}
	if want := "Answer: 4 from " + res.Winner.AgentID; res.FinalAnswer == nil || *res.FinalAnswer != want {
		t.Errorf("final answer %q; want the winner's, %q", coordination.Deref(res.FinalAnswer), want)
	}
	if !strings.HasPrefix(res.FinalNote, "the final call was stopped (stopped: it would take the session past its cost_budget_usd of $1.00") {
		t.Errorf("final_note %q; want it to say the budget stopped the final call", res.FinalNote)
	}
	if res.CostUSD == nil || *res.CostUSD < 1.0-1e-9 || *res.CostUSD > 1.0+turn+1e-9 {
		t.Errorf("cost $%.4f; want the budget spent, and at most one turn past it ($%.2f)", dollars(res.CostUSD), 1.0+turn)
	}
}

// TestAFinalCallWithinTheBudgetIsMadeWithTheSessionsBudgets: with room
// left, the final call is made as before, given the session's Spend and
// what is left of its token budget, as a step is.
func TestAFinalCallWithinTheBudgetIsMadeWithTheSessionsBudgets(t *testing.T) {
	spend := "no Spend"
	h, s, calls := presentingPair(t, 0.45, providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Spend != nil {
			spend = req.Spend.Used(providers.Free())
		}
		c := 0.05
		return coordtest.Answer("FINAL"), providers.Usage{Input: 1000, Output: 1000, CostUSD: &c}, nil
	}))
	res := h.Run(s.ID)
	if calls.Load() != 1 || res.FinalAnswer == nil || *res.FinalAnswer != "FINAL" || res.FinalNote != "" {
		t.Fatalf("want the final call's answer: %s", coordtest.JSON(res))
	}
	if spend != "" {
		t.Errorf("the final call's Spend said %q; want the session's, with room", spend)
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-0.95) > 1e-9 {
		t.Errorf("cost $%.4f; want $0.95", dollars(res.CostUSD))
	}
}
