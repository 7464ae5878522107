package coordination

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// criteriaBound is what binds a criteria call made for a session (or for a
// team about to be one): its budgets, what it has paid before the call,
// and, for a team not yet created, its first round's worst case, which
// must still fit after the criteria. Every attempt of the call is checked
// against it before it is sent: the first, the corrective retry of an
// invalid reply and each retry of a transient failure
// (criteria.GenerateRequest.Budget), each paid for.
type criteriaBound struct {
	rules Rules
	// lender is an agent of the team on the criteria model with its own
	// price_in and price_out, which price the call (see lender).
	lender Agent
	// paid is the session's spend before the call: its ledger, and what
	// an outage keeps from it here. It is read once, when the call
	// begins, and the call's own attempts are added to it.
	paid, round spent
	spec        providers.Spec
	// hold is the call's place among the session's spend in flight in
	// this process (spendhold.go), nil for a team not yet created or a
	// session without a budget. Criteria attach only before the first
	// step, but nothing holds the session meanwhile: through it each
	// attempt counts what the steps a run starts and the other criteria
	// calls hold, and reserves its own worst case where they count it,
	// so two calls checked at once cannot both take the same room; on a
	// store that shares holds, on every replica (reserveShared).
	hold *stepSpend
}

// lender is an agent of agents on the model spec with its own price_in and
// price_out, as the operator set them for that model: they price a
// criteria call by the same model as they price the agent's steps.
func lender(agents []Agent, spec providers.Spec) (Agent, pricing.Rates, bool) {
	for _, a := range agents {
		if a.Model == spec.String() {
			if r, ok := a.rates(); ok {
				return a, r, true
			}
		}
	}
	return Agent{}, pricing.Rates{}, false
}

// limits bind each attempt of the call as a step's limits bind a step, so
// a writer that loops (a coding-agent CLI) is stopped where a step would
// be: the rules' max_tool_calls_per_step; a reply of at most the
// DefaultEstimateOutputTokens its worst case assumes; what is left of the
// token_budget (less the round kept for a team not yet created); and the
// budgets as it spends (Spend: the call's hold for a session, whose
// reports never hold less than its reservation, or the team's budgets
// with its round kept). A session without a budget has only the first.
func (b criteriaBound) limits() criteria.Limits {
	l := criteria.Limits{MaxToolCalls: b.rules.MaxToolCallsPerStep}
	if !b.rules.budgeted() {
		return l
	}
	l.MaxOutputTokens = DefaultEstimateOutputTokens
	if t := b.rules.TokenBudget; t != nil {
		l.TokenBudget = max(*t-b.paid.tokens-b.round.tokens, 1)
	}
	switch {
	case b.hold != nil:
		l.Spend = b.hold
	default:
		cost, tokens, round := b.rules.CostBudgetUSD, b.rules.TokenBudget, b.round.plus(b.paid)
		l.Spend = providers.SpendFunc(func(u providers.Usage) string {
			if budget, spend := pastBudget(cost, tokens, round.plus(spentOf(u))); budget != "" {
				return fmt.Sprintf("would leave the team's %s short of its first round (%s with the round kept)", budget, spend)
			}
			return ""
		})
	}
	return l
}

// requestTokens is about how many tokens a request sends: its text, its
// tools' definitions and the refused attempts it replays.
func requestTokens(req providers.Request) int64 {
	n := approxTokens(req.System) + approxTokens(req.Prompt) + toolTokens(req.Tools)
	for _, t := range req.History {
		n += approxTokens(t.Reply.Text) + approxTokens(t.Problem)
		for _, c := range t.Reply.Calls {
			n += approxTokens(c.Name) + approxTokens(string(c.Args))
		}
	}
	return n
}

// affords refuses an attempt of a criteria call (next, the request about to
// be sent) that the budgets cannot pay for, after the call's attempts so
// far spent sofar (the zero Usage before the first): what was paid before,
// what they spent, and the attempt's worst case (its request and a reply
// of DefaultEstimateOutputTokens, as a step's estimate assumes for an
// agent without max_output_tokens) must fit each budget, with the round
// kept for a team not yet created; and under a cost budget the model must
// be priced (ErrUnpriced, as for an agent: an unpriced call would count as
// $0 and never be stopped). A team whose budget the criteria leave short
// of one round would be refused, its criteria paid for nothing (Create's
// checkBudgetAffordsARound), or stopped before its first answers. A later
// attempt's refusal reads as the reason no more were made: it ends in the
// built-in criteria, not in an error.
func (b criteriaBound) affords(next providers.Request, sofar providers.Usage) error {
	if !b.rules.budgeted() {
		return nil
	}
	// A coding-agent CLI sends its own system prompt and tools besides
	// the request, as a step's estimate counts them.
	in, out := requestTokens(next)+cliPromptTokens[b.spec.Backend], int64(DefaultEstimateOutputTokens)
	model := providers.ShowSpec(b.spec.String())
	var cost float64
	if b.rules.CostBudgetUSD != nil {
		c, _, ok := worstCost(b.spec, b.lender, in, out)
		if !ok {
			return fmt.Errorf("%w: %w: the criteria model %s has no price here (no list price, not self-hosted, no price_in/price_out), so the session's cost budget would count its spend as $0 and never stop it; "+
				"use token_budget instead of cost_budget_usd, name a model with a list price, or attach criteria you wrote (they cost nothing)", ErrBadInput, ErrUnpriced, model)
		}
		cost = c
	}
	attempt := spent{cost: cost, tokens: in + out}
	var inFlight spent
	fits := func(paid, held spent) string {
		inFlight = held
		return b.shortfall(paid, held, attempt, model, out)
	}
	var facts string
	if b.hold != nil {
		if facts = b.hold.reserve(spentOf(sofar), attempt, fits); facts == "" {
			facts = b.hold.reserveShared(spentOf(sofar), attempt, fits)
		}
	} else {
		facts = fits(b.paid.plus(spentOf(sofar)), spent{})
	}
	switch {
	case facts == "":
		return nil
	case sofar.Tokens() > 0 || spentOf(sofar).cost > 0:
		return fmt.Errorf("%w: %s", ErrCriteriaBudget, facts)
	}
	fix := "raise the budget of a new team, or attach criteria you wrote (they cost nothing)"
	if inFlight != (spent{}) {
		// What they hold is a worst case: most of it may come back.
		fix = "ask again once they have ended, " + fix
	}
	return fmt.Errorf("%w: %w: %s; %s", ErrBadInput, ErrCriteriaBudget, facts, fix)
}

// shortfall says how an attempt whose worst case is attempt, by model
// with a reply of out tokens, would not fit the budgets once paid is
// spent (before the call and by its attempts so far) and held is held by
// the other steps and calls in flight; "" when it fits.
func (b criteriaBound) shortfall(paid, held, attempt spent, model string, out int64) string {
	r, round := b.rules, b.round
	if c := r.CostBudgetUSD; c != nil && paid.cost+held.cost+round.cost+attempt.cost > *c {
		before := fmt.Sprintf("$%s is spent", Dollars(paid.cost))
		if held.cost > 0 {
			before = fmt.Sprintf("%s and $%s is held by the calls and steps in flight", before, Dollars(held.cost))
		}
		if round != (spent{}) {
			before = fmt.Sprintf("%s, and one round of its agents may cost about $%s after the criteria", before, Dollars(round.cost))
		}
		return fmt.Sprintf("its cost_budget_usd is $%s, %s, and a call by %s may cost about $%s at list prices (its prompt and a reply of %d tokens)",
			Dollars(*c), before, model, Dollars(attempt.cost), out)
	}
	if t := r.TokenBudget; t != nil && paid.tokens+held.tokens+round.tokens+attempt.tokens > *t {
		before := fmt.Sprintf("%d tokens are spent", paid.tokens)
		if held.tokens > 0 {
			before = fmt.Sprintf("%s and %d are held by the calls and steps in flight", before, held.tokens)
		}
		if round != (spent{}) {
			before = fmt.Sprintf("%s, and one round of its agents may take about %d tokens after the criteria", before, round.tokens)
		}
		return fmt.Sprintf("its token_budget is %d, %s, and a call by %s may take about %d (its prompt and a reply of %d tokens)",
			*t, before, model, attempt.tokens, out)
	}
	return ""
}
