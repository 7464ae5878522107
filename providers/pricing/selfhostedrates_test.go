package pricing

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestOwnRatesPriceASelfHostedBackend: a self-hosted backend's $0 is the
// assumption that nobody bills its tokens; an operator's rates for it say
// somebody does (a paid endpoint behind VLLM_BASE_URL), so they price its
// steps and spend reports, where the table's $0 stood before.
func TestOwnRatesPriceASelfHostedBackend(t *testing.T) {
	r := Rates{Input: 2, Output: 10}
	var heard *float64
	spend := providers.SpendFunc(func(u providers.Usage) string { heard = u.CostUSD; return "" })
	loop := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		req.Spend.Used(providers.Usage{Input: 1_000_000})
		return providers.Action{}, providers.Usage{Input: 1_000_000, Output: 100_000}, nil
	})
	_, u, err := WithRates(Priced(loop, "vllm", "Qwen/Qwen3-8B"), "vllm", r).Step(context.Background(), providers.Request{Spend: spend})
	if err != nil {
		t.Fatal(err)
	}
	if u.CostUSD == nil || !near(*u.CostUSD, 3) || heard == nil || !near(*heard, 2) {
		t.Errorf("the step cost %v and its report %v; want $3 and $2 at the operator's rates", deref(u.CostUSD), deref(heard))
	}
}
