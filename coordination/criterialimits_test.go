package coordination_test

import (
	"context"
	"math"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// criteriaLimits is what a criteria request carried of a step's limits.
type criteriaLimits struct {
	toolCalls int
	maxOutput int
	tokens    int64
	spend     bool
}

// limitsOf opens a criteria writer that keeps the limits its criteria
// request carried in got, and writes three valid criteria for free.
func limitsOf(got *criteriaLimits) func(providers.Spec) (providers.Provider, error) {
	return func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose == providers.PurposeCriteria {
				*got = criteriaLimits{req.ToolCallLimit(), req.MaxOutputTokens, req.TokenBudget, req.Spend != nil}
				return coordtest.Act(threeCriteria), providers.Free(), nil
			}
			return coordtest.Answer("Answer: 391"), providers.Free(), nil
		}), nil
	}
}

// TestACriteriaCallCarriesAStepsLimits: a criteria call made for a
// session (or a team about to be one) is bound as a step is, so a
// coding-agent CLI writing the criteria (which counts its tool calls,
// tokens and spend against the request) is stopped where a step would
// be: the session's max_tool_calls_per_step (3), what is left of its
// token_budget (50,000), a reply of at most the worst case the budget
// check assumed (DefaultEstimateOutputTokens), and the session's budgets
// as it spends (Spend). Before, the request carried none: a CLI writer
// had the provider's default of 40 tool calls, no token budget and no
// spend check, bounded only by step_timeout_seconds.
func TestACriteriaCallCarriesAStepsLimits(t *testing.T) {
	ctx := context.Background()
	tokens := int64(50_000)
	rules := coordination.Rules{MaxToolCallsPerStep: 3, TokenBudget: &tokens}
	want := criteriaLimits{3, coordination.DefaultEstimateOutputTokens, tokens, true}
	t.Run("session", func(t *testing.T) {
		var got criteriaLimits
		svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: limitsOf(&got)})
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep, Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3}); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("the criteria request's limits: %+v; want %+v", got, want)
		}
	})
	t.Run("team", func(t *testing.T) {
		var got criteriaLimits
		svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: limitsOf(&got)})
		team := coordination.TeamSpec{Models: []string{"sim", "sim"}, Rules: rules}
		e, err := svc.Estimate(coordination.TeamSpec{Task: "What is 17 * 23?", Models: team.Models, Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Criteria(ctx, coordination.CriteriaRequest{Task: "What is 17 * 23?", Model: criteriaModel, Count: 3, Team: &team}); err != nil {
			t.Fatal(err)
		}
		// The team's first round is kept from what the criteria may take.
		want := want
		want.tokens -= e.RoundTokens
		if got != want {
			t.Errorf("the criteria request's limits for a team not yet created: %+v; want %+v (its first round of %d tokens kept)", got, want, e.RoundTokens)
		}
	})
}

// TestALoopingCriteriaWriterIsStoppedByTheSessionsBudget: a criteria
// writer that loops as a coding-agent CLI does, $0.02 a turn, reporting
// its spend so far to the request's Spend, and that would write its
// criteria after 200 turns ($4.00). Under the session's cost_budget_usd
// of $1 it must be stopped within a turn of the budget, its spend the
// session's, the built-in criteria used. Before, the request carried no
// Spend: it looped its 200 turns and the session spent $4.00 of $1.
func TestALoopingCriteriaWriterIsStoppedByTheSessionsBudget(t *testing.T) {
	const budget, turn = 1.0, 0.02
	ctx := context.Background()
	writer := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose != providers.PurposeCriteria {
			return coordtest.Answer("Answer: 391"), providers.Free(), nil
		}
		u := providers.Free()
		for i := 0; i < 200; i++ {
			c := *u.CostUSD + turn
			u = providers.Usage{Input: u.Input + 1000, Output: u.Output + 100, CostUSD: &c}
			if req.Spend != nil {
				if why := req.Spend.Used(u); why != "" {
					return providers.Action{}, u, &providers.Error{Class: providers.ClassBudget, Message: "stopped: it " + why}
				}
			}
		}
		return coordtest.Act(threeCriteria), u, nil
	})
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) { return writer, nil }})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep,
		Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	cost, _ := sessionSpend(t, svc, s.ID)
	t.Logf("the looping criteria writer: %v, source %s (%s); the session spent $%.2f of $%.2f", err, set.Source, set.Note, cost, budget)
	if cost > budget+turn+1e-9 || math.IsNaN(cost) {
		t.Errorf("the session spent $%.2f on its criteria; want it stopped within a turn ($%.2f) of its $%.2f budget", cost, turn, budget)
	}
}
