package providers

// Spend is a session's cost and token budgets as one step in flight sees
// them. The step reports its usage so far (every turn of every attempt of
// the step, summed, priced where a price is known) and hears whether the
// session — the steps landed, plus what every step in flight has reported
// — is now past a budget. Coordination implements it; a provider calls it
// from one goroutine per step. A CLI agent reports as its stream tells
// usage; an API agent's tool loop (RunLoop) after each turn that asked
// for tools, so a step of one model call reports nothing.
type Spend interface {
	// Used records the step's usage so far and returns why the session's
	// budget is spent ("the session's cost_budget_usd of $1.00 is spent"),
	// or "" while there is room.
	Used(step Usage) string
}

// SpendFunc adapts a function to a Spend, as Func adapts one to a
// Provider: for a wrapper that changes a report on its way (prices it,
// adds what the step's earlier attempts spent).
type SpendFunc func(step Usage) string

// Used calls f(step).
func (f SpendFunc) Used(step Usage) string { return f(step) }
