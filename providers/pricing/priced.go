package pricing

import (
	"context"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Priced wraps a provider so that every usage it returns carries a cost:
// the adapter's own when it set one, else the table's (nil if the model is
// unknown). A failed call that reported no tokens at all cost nothing, so
// its cost is a known 0 even for an unknown model — otherwise one refused
// request would make a whole session's budget unenforceable. The
// request's Spend hears the same prices.
func Priced(p providers.Provider, backend, model string) providers.Provider {
	return &priced{p: p, backend: backend, model: model}
}

type priced struct {
	p              providers.Provider
	backend, model string
}

func (pr *priced) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	if spend := req.Spend; spend != nil {
		// A tool loop's reports of its usage so far are priced as its sum
		// is at the end, so the session's budget counts them in dollars.
		req.Spend = providers.SpendFunc(func(u providers.Usage) string {
			if u.CostUSD == nil {
				u.CostUSD = Cost(pr.backend, pr.model, u)
			}
			return spend.Used(u)
		})
	}
	act, u, err := pr.p.Step(ctx, req)
	if u.CostUSD == nil {
		if err != nil && u.Input == 0 && u.CachedInput == 0 && u.Output == 0 && u.Reasoning == 0 {
			u.CostUSD = providers.Free().CostUSD
		} else {
			u.CostUSD = Cost(pr.backend, pr.model, u)
		}
	}
	return act, u, err
}
