package pricing

import (
	"context"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Rates are an operator's own prices for a model the table lacks (a team
// file's price_in and price_out), in USD per million tokens.
type Rates struct {
	Input, Output float64
}

// Cost prices a usage at the rates: every input token, cached or not, at
// Input (no cache price was given: above a cache read's price, but below a
// cache write's, which Anthropic bills at 1.25-2 times input) and every
// output token at Output, reasoning being part of output as in Cost.
func (r Rates) Cost(u providers.Usage) float64 {
	return (float64(max(u.Input, 0))*r.Input + float64(max(u.Output, u.Reasoning, 0))*r.Output) / 1e6
}

// WithRates wraps a provider of backend so that a usage it returns, or
// reports to the request's Spend or BeforeRetry, without a cost is priced
// at r. A cost already there — the adapter's own, or the table's (Priced)
// — stands: r prices only what would otherwise be unknown, which a cost
// budget could not bound. A self-hosted backend's $0 is the exception: it assumes the
// server is the operator's own, and an operator who prices it says that
// somebody bills its tokens (a paid endpoint behind VLLM_BASE_URL).
func WithRates(p providers.Provider, backend string, r Rates) providers.Provider {
	return &rated{p: p, r: r, always: providers.SelfHosted(backend)}
}

type rated struct {
	p providers.Provider
	r Rates
	// always prices every usage at r: a self-hosted backend's.
	always bool
}

func (w *rated) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	if spend := req.Spend; spend != nil {
		req.Spend = providers.SpendFunc(func(u providers.Usage) string {
			return spend.Used(w.price(u))
		})
	}
	if before := req.BeforeRetry; before != nil {
		req.BeforeRetry = func(u providers.Usage) string { return before(w.price(u)) }
	}
	act, u, err := w.p.Step(ctx, req)
	return act, w.price(u), err
}

func (w *rated) price(u providers.Usage) providers.Usage {
	if u.CostUSD == nil || w.always {
		c := w.r.Cost(u)
		u.CostUSD = &c
	}
	return u
}
