package coordination_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
)

// unlistedModel has no list price: only its agents' price_in/price_out
// price it, so a check that ignored them could not price the final call.
const unlistedModel = "openrouter/qwen/qwen3-coder"

// pricedPresentingPair is a two-agent team on unlistedModel, priced by the
// operator at $10 in and priceOut out a million tokens, under a $1 budget
// with the present strategy. Its agents answer at once for $0.45 each
// (reported), which leaves $0.10 and stops the run by budget; the present
// call is final's (counted in calls), its usage priced at the agents'
// rates where it reports no cost.
func pricedPresentingPair(t *testing.T, priceOut float64, final providers.Provider) (*coordtest.Harness, *coordination.Session, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose == providers.PurposePresent {
			calls.Add(1)
			return final.Step(ctx, req)
		}
		c := 0.45
		return coordtest.Answer("Answer: 4 from " + req.AgentID), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
	})
	h := coordtest.New(t, map[string]providers.Provider{unlistedModel: p})
	in := 10.0
	agent := func(id string) coordination.Agent {
		return coordination.Agent{ID: id, Model: unlistedModel, PriceIn: &in, PriceOut: &priceOut}
	}
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{agent("agent_a"), agent("agent_b")},
		Rules: coordination.Rules{CostBudgetUSD: new(1.0), Final: coordination.FinalPresent}})
	return h, s, &calls
}

// presentCall is a present call's reply of out tokens, priced at the
// agents' rates (it reports no cost).
func presentCall(out int64) providers.Provider {
	return providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		return coordtest.Answer("FINAL"), providers.Usage{Input: 1000, Output: out}, nil
	})
}

// TestAFinalCallWhoseWorstCaseDoesNotFitIsSkipped: the rounds leave $0.10
// of the $1 budget, and a present call's worst case at the agents' own
// $40 a million output tokens (its prompt and a reply of 8,192 tokens) is
// about $0.34: the call is not made, and the session finishes with the
// winner's answer as it stands, final_note and the timeline saying why.
// Before, only a budget already spent skipped it: the call was made, its
// 8,000 tokens of reply cost $0.33 and the session spent $1.23 of $1.
// At $4 a million the worst case (about $0.04) fits, and the call is made.
func TestAFinalCallWhoseWorstCaseDoesNotFitIsSkipped(t *testing.T) {
	for _, tc := range []struct {
		name     string
		priceOut float64
		made     bool
	}{
		{"a worst case past the budget", 40, false},
		{"a worst case within it", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, s, calls := pricedPresentingPair(t, tc.priceOut, presentCall(8000))
			res := h.Run(s.ID)
			t.Logf("%d present calls; the session spent $%.4f; final_note %q", calls.Load(), dollars(res.CostUSD), res.FinalNote)
			if res.Status != coordination.StatusFinished || coordination.Deref(res.StopReason) != coordination.StopBudget || res.Winner == nil {
				t.Fatalf("want a finished budget stop with a winner: %s", coordtest.JSON(res))
			}
			if res.CostUSD == nil || *res.CostUSD > 1.0+1e-9 {
				t.Errorf("the session spent $%.4f under a cost_budget_usd of $1.00", dollars(res.CostUSD))
			}
			if tc.made {
				want := 0.90 + (1000*10+8000*tc.priceOut)/1e6
				if calls.Load() != 1 || coordination.Deref(res.FinalAnswer) != "FINAL" || res.FinalNote != "" {
					t.Errorf("want the present call made and its answer used: %d calls, answer %q, note %q", calls.Load(), coordination.Deref(res.FinalAnswer), res.FinalNote)
				}
				if res.CostUSD == nil || math.Abs(*res.CostUSD-want) > 1e-9 {
					t.Errorf("cost $%.4f; want $%.4f, the call counted at the agents' own prices", dollars(res.CostUSD), want)
				}
				return
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("the present call was made %d times; want none, its worst case not fitting the $0.10 left", n)
			}
			if want := "Answer: 4 from " + res.Winner.AgentID; coordination.Deref(res.FinalAnswer) != want {
				t.Errorf("final answer %q; want the winner's as it stands, %q", coordination.Deref(res.FinalAnswer), want)
			}
			if !strings.Contains(res.FinalNote, "cost_budget_usd") || !strings.Contains(res.FinalNote, "8192") ||
				!strings.HasSuffix(res.FinalNote, "; the winner's answer is used as is") {
				t.Errorf("final_note %q; want it to say the budget cannot pay for the call's worst case, and that the winner's answer is used", res.FinalNote)
			}
			if res.CostUSD == nil || math.Abs(*res.CostUSD-0.90) > 1e-9 {
				t.Errorf("cost $%.4f; want the two steps' $0.90", dollars(res.CostUSD))
			}
			wantFinalSkipped(t, h, s.ID, "no present call: ")
		})
	}
}

// TestAFinalCallsRetryMustFitTheBudget: the present call's worst case
// (about $0.04 at the agents' $4 a million output tokens) fits the $0.10
// the rounds left, but its first attempt fails as a rate limit after
// spending $0.07 (2,000 tokens in, 12,500 out, at the agents' prices): a
// retry's worst case no longer fits, so none is made and the winner's
// answer is used, the note saying the budget stopped the call. Before,
// the resilience layer retried while the budget was not yet spent, and the
// session spent $1.04 of $1.
func TestAFinalCallsRetryMustFitTheBudget(t *testing.T) {
	var attempts atomic.Int32
	inner := providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		attempts.Add(1)
		return providers.Action{}, providers.Usage{Input: 2000, Output: 12500}, &providers.Error{Class: providers.ClassRateLimit, Status: 429, Message: "dummy: slow down"}
	})
	final := resilience.Wrap(inner, "openrouter", resilience.Options{Breakers: resilience.NewBreakers(resilience.BreakerSettings{}),
		Sleep: func(context.Context, time.Duration) error { return nil }})
	h, s, _ := pricedPresentingPair(t, 4, final)
	res := h.Run(s.ID)
	t.Logf("%d attempts; the session spent $%.4f; final_note %q", attempts.Load(), dollars(res.CostUSD), res.FinalNote)
	if res.Status != coordination.StatusFinished || res.Winner == nil {
		t.Fatalf("want a finished session with a winner: %s", coordtest.JSON(res))
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("the present call was tried %d times; want once, a retry's worst case not fitting the $0.03 left", n)
	}
	if res.CostUSD == nil || *res.CostUSD > 1.0+1e-9 {
		t.Errorf("the session spent $%.4f under a cost_budget_usd of $1.00", dollars(res.CostUSD))
	}
	if want := "Answer: 4 from " + res.Winner.AgentID; coordination.Deref(res.FinalAnswer) != want {
		t.Errorf("final answer %q; want the winner's as it stands, %q", coordination.Deref(res.FinalAnswer), want)
	}
	if !strings.HasPrefix(res.FinalNote, "the final call was stopped (") || !strings.Contains(res.FinalNote, "not retried") {
		t.Errorf("final_note %q; want it to say the budget stopped the call before a retry", res.FinalNote)
	}
}

// TestAFinalCallsCorrectiveAttemptMustFitTheBudget: the present call's
// first reply (about $0.04 in the worst case, which fits the $0.10 left)
// submits no answer and spends $0.07 (2,000 tokens in, 12,500 out, at the
// agents' prices). The corrective attempt, which replays that reply, is
// another paid call whose worst case no longer fits: it is not made, and
// the winner's answer is used, the note saying why.
func TestAFinalCallsCorrectiveAttemptMustFitTheBudget(t *testing.T) {
	var attempts atomic.Int32
	final := providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		if attempts.Add(1) == 1 {
			return providers.Action{Text: "no tool call"}, providers.Usage{Input: 2000, Output: 12500}, nil
		}
		return coordtest.Answer("FINAL"), providers.Usage{Input: 2000, Output: 12500}, nil
	})
	h, s, _ := pricedPresentingPair(t, 4, final)
	res := h.Run(s.ID)
	t.Logf("%d attempts; the session spent $%.4f; final_note %q", attempts.Load(), dollars(res.CostUSD), res.FinalNote)
	if n := attempts.Load(); n != 1 {
		t.Errorf("the present call was made %d times; want once, the corrective attempt's worst case not fitting the $0.03 left", n)
	}
	if res.CostUSD == nil || *res.CostUSD > 1.0+1e-9 {
		t.Errorf("the session spent $%.4f under a cost_budget_usd of $1.00", dollars(res.CostUSD))
	}
	if res.Winner == nil || coordination.Deref(res.FinalAnswer) != "Answer: 4 from "+res.Winner.AgentID {
		t.Errorf("final answer %q; want the winner's as it stands", coordination.Deref(res.FinalAnswer))
	}
	if !strings.HasPrefix(res.FinalNote, "the final call gave no usable answer and was not asked again (the session's cost_budget_usd") {
		t.Errorf("final_note %q; want it to say the budget could not pay for another attempt", res.FinalNote)
	}
}
