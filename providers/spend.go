package providers

// Spend is a session's cost and token budgets as one step in flight sees
// them. The step reports its usage so far (every turn of every attempt of
// the step, summed, priced where a price is known) and hears whether the
// session — the steps landed, plus what every step in flight has reported
// — is now past a budget. Coordination implements it; a provider calls it
// from one goroutine per step.
type Spend interface {
	// Used records the step's usage so far and returns why the session's
	// budget is spent ("the session's cost_budget_usd of $1.00 is spent"),
	// or "" while there is room.
	Used(step Usage) string
}
