package coordination

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen-mcp/providers"
)

// finalBound is what binds a session's final call (present or
// synthesize): its budgets, what it paid before the call, and the writer
// whose model makes it, whose max_output_tokens and price_in/price_out
// price the call's worst case as they price its steps. Every attempt is
// checked against it before it is sent — the first, each corrective one
// and each retry of a transient failure (Request.BeforeRetry) — since a
// call that only stops once the budget is spent may pass it by its whole
// reply.
type finalBound struct {
	rules  Rules
	writer Agent
	spec   providers.Spec
	// paid is the session's spend before the call: its ledger, and what
	// an outage keeps from it here. The session is decided, so no step
	// starts meanwhile; the call's own attempts are added to it.
	paid spent
	// inFlight is what the steps still in flight when the session was
	// decided may spend (a host's step beside a Finalize, on any
	// replica): they are stopped by the decision, but one whose model has
	// replied lands and is paid, and a stopped one is paid for what it
	// spent. Each counts as a launch counts it (affordable): the mean of
	// the steps landed, or a first step's worst case before any has, or
	// what those here reported spending, if more. steps is how many.
	inFlight spent
	steps    int
	// extra is what the call sends beyond its request's text: a CLI's own
	// prompt and the task's images, as a step's estimate counts them.
	extra int64
}

// finalBoundOf is the bound of a final call by writer on spec, sending req:
// the session's spend read now (after finalLock recorded what a writer
// that died mid-call left), or, the store not answering, as st had it
// (the spend its writes kept waiting for the store is then not known).
func (svc *Service) finalBoundOf(ctx context.Context, s *Session, st *State, writer Agent, req providers.Request, held StepLock) finalBound {
	b := finalBound{rules: s.Rules, writer: writer, paid: ledgerSpent(st).spent,
		extra: int64(len(req.Images)) * EstimateImageTokens}
	if !s.Rules.budgeted() {
		return b // nothing to check: no read
	}
	if sp, err := writer.Spec(); err == nil {
		b.spec, b.extra = sp, b.extra+cliPromptTokens[sp.Backend]
	}
	l, err := svc.sessions.ledger(ctx, s.ID)
	if err == nil {
		b.paid = spendOf(l).spent.plus(svc.spool.heldFor(s.ID, l))
	}
	// The writer's own lock, held for this call (finalLock), is no step.
	if inFlight, ierr := svc.store.InFlight(ctx, s.ID); ierr == nil {
		for id, busy := range inFlight {
			if busy && (id != writer.ID || held == nil) {
				b.steps++
			}
		}
	}
	if b.steps > 0 {
		sp := ledgerSpent(st)
		if err == nil {
			sp = spendOf(l)
		}
		b.inFlight = inFlightWorth(s, sp, b.steps, svc.runs.spent(s.ID))
	}
	return b
}

// inFlightWorth is what n steps in flight may spend: each at the mean of
// the steps landed (sp), or a first step's worst case before any has,
// as a launch counts them (affordable); or what those in flight here
// reported so far (live), where more.
func inFlightWorth(s *Session, sp ledgerSpend, n int, live spent) spent {
	var per spent
	if sp.costed > 0 {
		per.cost = sp.cost / float64(sp.costed)
	}
	if sp.steps > 0 {
		per.tokens = sp.tokens / int64(sp.steps)
	}
	if sp.costed == 0 || sp.steps == 0 {
		w := worstStep(s)
		if sp.costed == 0 {
			per.cost = w.cost
		}
		if sp.steps == 0 {
			per.tokens = w.tokens
		}
	}
	return spent{max(float64(n)*per.cost, live.cost), max(int64(n)*per.tokens, live.tokens)}
}

// spentWords says what paid (with the steps in flight) is, for a note.
func (b finalBound) spentWords(paid spent, cost bool) string {
	if cost {
		if b.steps == 0 {
			return fmt.Sprintf("$%s is spent", Dollars(paid.cost))
		}
		return fmt.Sprintf("$%s is spent and %d step(s) still in flight may cost about $%s", Dollars(paid.cost), b.steps, Dollars(b.inFlight.cost))
	}
	if b.steps == 0 {
		return fmt.Sprintf("%d tokens are spent", paid.tokens)
	}
	return fmt.Sprintf("%d tokens are spent and %d step(s) still in flight may take about %d", paid.tokens, b.steps, b.inFlight.tokens)
}

// replyTokens is the largest reply the call may be billed for: the
// writer's max_output_tokens (the request asks for no more), else what a
// step's estimate assumes.
func (b finalBound) replyTokens() int64 {
	if b.writer.MaxOutputTokens > 0 {
		return int64(b.writer.MaxOutputTokens)
	}
	return DefaultEstimateOutputTokens
}

// shortfall says why the budgets cannot pay for what (the final call, or
// another attempt of it) sending next, after the call's attempts so far
// spent sofar (the zero Usage before the first): what was paid, what they
// spent and next's worst case (its prompt and a whole reply) must fit
// each budget, and under a cost budget the writer's model must be priced.
// "" when it fits.
func (b finalBound) shortfall(what string, next providers.Request, sofar providers.Usage) string {
	r := b.rules
	if !r.budgeted() {
		return ""
	}
	in, out := requestTokens(next)+b.extra, b.replyTokens()
	model := providers.ShowSpec(b.spec.String())
	paid := b.paid.plus(spentOf(sofar))
	if c := r.CostBudgetUSD; c != nil {
		cost, own, ok := worstCost(b.spec, b.writer, in, out)
		if !ok {
			return fmt.Sprintf("the session's cost_budget_usd of $%s cannot bound %s: %s has no price here (no list price, not self-hosted, no price_in/price_out)",
				Dollars(*c), what, model)
		}
		if paid.cost+b.inFlight.cost+cost > *c {
			at := "at list prices"
			if own {
				at = "at " + b.writer.ID + "'s own price_in/price_out"
			}
			return fmt.Sprintf("the session's cost_budget_usd of $%s cannot pay for %s: %s, and a call by %s may cost about $%s %s (its prompt and a reply of %d tokens)",
				Dollars(*c), what, b.spentWords(paid, true), model, Dollars(cost), at, out)
		}
	}
	if t := r.TokenBudget; t != nil && paid.tokens+b.inFlight.tokens+in+out > *t {
		return fmt.Sprintf("the session's token_budget of %d cannot pay for %s: %s, and a call by %s may take about %d (its prompt and a reply of %d tokens)",
			*t, what, b.spentWords(paid, false), model, in+out, out)
	}
	return ""
}

// beforeRetry is the call's Request.BeforeRetry for an attempt sending
// next after the attempts before it spent before: a retry is another paid
// call, so it must fit after those and next's own tries (tried).
func (b finalBound) beforeRetry(next providers.Request, before providers.Usage) func(providers.Usage) string {
	return func(tried providers.Usage) string {
		return b.shortfall("another attempt", next, before.Add(tried))
	}
}
