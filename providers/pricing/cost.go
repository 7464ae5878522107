package pricing

import "github.com/massgen-go/massgen-mcp/providers"

// Cost prices one normalised usage (see the package doc for the rule), or
// returns nil when the model is not in the table. A self-hosted backend's
// model (providers.SelfHosted) costs a known 0: nobody bills its tokens.
func Cost(backend, model string, u providers.Usage) *float64 {
	return CostWithCacheWrites(backend, model, u, 0, 0)
}

// CostWithCacheWrites is Cost for an Anthropic usage whose Input includes
// write5m and write1h tokens written to the prompt cache, which are billed
// at the cache-write prices instead of the input price.
func CostWithCacheWrites(backend, model string, u providers.Usage, write5m, write1h int64) *float64 {
	if providers.SelfHosted(backend) {
		return new(0.0)
	}
	e, ok := Lookup(backend, model)
	if !ok {
		return nil
	}
	in, out := e.Input, e.Output
	cachedRate := e.CachedInput
	long := e.LongContext != nil && u.Input > e.LongContext.ThresholdTokens
	if long {
		in, out, cachedRate = e.LongContext.Input, e.LongContext.Output, e.LongContext.CachedInput
	}
	cachedPrice := in
	if cachedRate != nil {
		cachedPrice = *cachedRate
	}
	cached := clamp(u.CachedInput, 0, u.Input)
	uncached := u.Input - cached
	w5 := clamp(write5m, 0, uncached)
	w1 := clamp(write1h, 0, uncached-w5)
	// Output already includes reasoning; an adapter that broke the rule and
	// reported more reasoning than output is billed for the reasoning.
	billedOut := max(u.Output, u.Reasoning)
	usd := float64(uncached-w5-w1)*in + float64(cached)*cachedPrice + float64(billedOut)*out +
		float64(w5)*writePrice(e.CacheWrite5m, in, long) + float64(w1)*writePrice(e.CacheWrite1h, in, long)
	usd /= 1e6
	return &usd
}

// writePrice is a cache write's price per million tokens. Without a
// researched write price, or above the long-context threshold (for which no
// write price was researched), it is never below the input price in force.
func writePrice(p *float64, in float64, long bool) float64 {
	if p == nil {
		return in
	}
	if long {
		return max(*p, in)
	}
	return *p
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }
