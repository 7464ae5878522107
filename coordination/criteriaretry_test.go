package coordination_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/resilience"
)

// threeCriteria is a valid submit_criteria call of three criteria.
var threeCriteria = providers.ToolCall{Name: criteria.ToolSubmit, Args: json.RawMessage(`{"criteria": [
	{"id": "E1", "text": "The product is exact.", "category": "must", "verify_by": "multiply it out", "anti_patterns": ["a rounded product", "no working"]},
	{"id": "E2", "text": "The working is shown.", "category": "should", "verify_by": "follow each line", "anti_patterns": ["a bare number", "skipped carries"]},
	{"id": "E3", "text": "It fits on one line.", "category": "could", "verify_by": "count the lines", "anti_patterns": ["a preamble", "a recap"]}]}`)}

// attemptCost is what every criteria call below reports spending, with
// 1,200 tokens: more than what a budget of $0.80 has left for a call's
// worst case (about $0.34) once one is paid.
const attemptCost = 0.50

func paidCall() providers.Usage {
	c := attemptCost
	return providers.Usage{Input: 1000, Output: 200, CostUSD: &c}
}

// criteriaSession is a session of two agents on criteriaModel under a cost
// budget of dollars, its criteria model the provider p.
func criteriaSession(t *testing.T, p providers.Provider, dollars float64) (*coordination.Service, *coordination.Session) {
	t.Helper()
	svc := coordination.NewService(coordtest.New(t, nil).Store, coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return p, nil }})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{criteriaModel, criteriaModel},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &dollars}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

// TestACorrectiveCriteriaRetryIsCheckedAgainstTheBudget: a criteria
// model's invalid first reply earns one corrective retry, another paid
// call: it is made only when its worst case fits what the first left of
// the session's budget. $0.50 spent of $0.80 leaves less than a call's
// worst case (about $0.34), so the defaults are attached instead, their
// note saying why, and the session has spent the one call.
func TestACorrectiveCriteriaRetryIsCheckedAgainstTheBudget(t *testing.T) {
	var calls atomic.Int32
	p := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if calls.Add(1) == 1 {
			return coordtest.Act(providers.ToolCall{Name: criteria.ToolSubmit, Args: json.RawMessage(`{"criteria": []}`)}), paidCall(), nil
		}
		return coordtest.Act(threeCriteria), paidCall(), nil
	})
	svc, s := criteriaSession(t, p, 0.80)
	set, err := svc.Criteria(context.Background(), coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	if err != nil {
		t.Errorf("the criteria request: %v; want the set (the defaults when a retry cannot be paid for)", err)
	}
	cost, tokens := sessionSpend(t, svc, s.ID)
	t.Logf("%d calls; the session spent $%.2f, %d tokens; set %s: %s", calls.Load(), cost, tokens, set.Source, set.Note)
	if n := calls.Load(); n != 1 {
		t.Errorf("the criteria model was called %d times; want 1 (the retry's worst case does not fit the $0.30 left)", n)
	}
	if cost > 0.80 {
		t.Errorf("the session spent $%.2f on criteria under a cost_budget_usd of $0.80", cost)
	}
	if set.Source != criteria.SourceDefault || !strings.Contains(set.Note, "budget") {
		t.Errorf("the set is %s with note %q; want the built-in criteria, the note saying the budget could not pay for a retry", set.Source, set.Note)
	}
	if math.Abs(cost-attemptCost) > 1e-9 || tokens != 1200 {
		t.Errorf("the session spent $%.4f, %d tokens; want $0.50, 1200 tokens (the one call made)", cost, tokens)
	}
}

// TestATransientCriteriaRetryIsCheckedAgainstTheBudget: a criteria call
// that fails as a transient error (a rate limit) is retried by the
// resilience layer, and each attempt is paid for (the provider reports a
// failed attempt's usage): another attempt is made only when its worst
// case fits what the attempts before left of the budget, and every
// attempt's usage, failed ones too, is the session's.
func TestATransientCriteriaRetryIsCheckedAgainstTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dollars float64
		calls   int32
		source  string
	}{
		// $0.50 of $0.80 spent by the failed attempt: no retry.
		{"a retry that does not fit", 0.80, 1, criteria.SourceDefault},
		// Room for all three: two failed attempts and the third's answer.
		{"retries that fit", 5, 3, criteria.SourceGenerated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			inner := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				if calls.Add(1) < 3 {
					return providers.Action{}, paidCall(), &providers.Error{Class: providers.ClassRateLimit, Status: 429, Message: "dummy: slow down"}
				}
				return coordtest.Act(threeCriteria), paidCall(), nil
			})
			p := resilience.Wrap(inner, "sim", resilience.Options{Breakers: resilience.NewBreakers(resilience.BreakerSettings{}),
				Sleep: func(context.Context, time.Duration) error { return nil }})
			svc, s := criteriaSession(t, p, tc.dollars)
			set, err := svc.Criteria(context.Background(), coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
			if err != nil {
				t.Errorf("the criteria request: %v; want the set (the defaults when a retry cannot be paid for)", err)
			}
			cost, tokens := sessionSpend(t, svc, s.ID)
			t.Logf("%d calls; the session spent $%.2f, %d tokens; set %s: %s", calls.Load(), cost, tokens, set.Source, set.Note)
			if n := calls.Load(); n != tc.calls {
				t.Errorf("the criteria model was called %d times; want %d", n, tc.calls)
			}
			if cost > tc.dollars {
				t.Errorf("the session spent $%.2f on criteria under a cost_budget_usd of $%.2f", cost, tc.dollars)
			}
			if want := float64(tc.calls) * attemptCost; math.Abs(cost-want) > 1e-9 || tokens != int64(tc.calls)*1200 {
				t.Errorf("the session spent $%.4f, %d tokens; want $%.2f, %d tokens (every attempt's, failed ones too)", cost, tokens, want, tc.calls*1200)
			}
			if set.Source != tc.source {
				t.Errorf("the set is %s (%s); want %s", set.Source, set.Note, tc.source)
			}
			if tc.source == criteria.SourceDefault && !strings.Contains(set.Note, "budget") {
				t.Errorf("the defaults' note reads %q; want it to say the budget could not pay for a retry", set.Note)
			}
		})
	}
}

// TestACriteriaCallPricedByAnAgentsRatesCountsAtThem: a criteria model
// with no list price is let under a cost budget when an agent of the team
// on the same model has the operator's price_in and price_out; its spend
// must then count at those prices, as the agent's would, not as $0.
func TestACriteriaCallPricedByAnAgentsRatesCountsAtThem(t *testing.T) {
	const model = "openrouter/qwen/qwen3-coder"
	p := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return coordtest.Act(threeCriteria), providers.Usage{Input: 1000, Output: 200}, nil // no cost: no list price
	})
	in, out, dollars := 10.0, 40.0, 5.0
	svc := coordination.NewService(coordtest.New(t, nil).Store, coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return p, nil }})
	agent := func(id string) coordination.Agent {
		return coordination.Agent{ID: id, Model: model, PriceIn: &in, PriceOut: &out}
	}
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Agents: []coordination.Agent{agent("a"), agent("b")},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &dollars}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Criteria(context.Background(), coordination.CriteriaRequest{SessionID: s.ID, Model: model, Count: 3}); err != nil {
		t.Fatal(err)
	}
	cost, _ := sessionSpend(t, svc, s.ID)
	if want := (1000*in + 200*out) / 1e6; math.Abs(cost-want) > 1e-9 {
		t.Errorf("the criteria call counted $%.4f in the session; want $%.4f (1,000 in and 200 out at the agents' $%.0f/$%.0f a million)", cost, want, in, out)
	}
}
