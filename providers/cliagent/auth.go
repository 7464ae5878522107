package cliagent

// AuthChecker is implemented by CLIs that can tell whether they can
// authenticate here (an API key, a login in their config directory), so
// that backends reports it with the fix, and a team that cannot work is
// refused at its start.
type AuthChecker interface {
	// CheckAuth returns whether the CLI can authenticate and a sentence
	// either way: what it authenticates with, or what to do.
	CheckAuth(a AuthContext) (ok bool, why string)
}

// SubscriptionTeller is implemented by CLIs whose login may bill a
// subscription (a ChatGPT plan, a Google account) rather than an API key: it
// tells, from what AuthChecker consults, whether a run here will. Costs
// priced from such runs are list-price estimates, not charges, and are
// marked so (Usage.CostEstimated). Claude Code says it in its stream
// instead (Outcome.Subscription).
type SubscriptionTeller interface {
	OnSubscription(a AuthContext) bool
}

// AuthContext is what a CLI may consult: variables (the environment, then
// .env files), the user's config directory of the CLI, the operator's
// choice of the user's own setup.
type AuthContext struct {
	Lookup    func(name string) (value, origin string, ok bool)
	ConfigDir string
	UserSetup bool
}
