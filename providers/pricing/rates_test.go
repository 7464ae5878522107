package pricing

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestWithRatesPricesOnlyWhatWouldBeUnknown: an operator's rates price a
// usage, and a spend report, that came back without a cost — all input at
// the input rate, output (reasoning beyond it too) at the output rate — and
// leave a cost the adapter or the table gave.
func TestWithRatesPricesOnlyWhatWouldBeUnknown(t *testing.T) {
	usd := func(f float64) *float64 { return &f }
	r := Rates{Input: 2, Output: 10}
	if c := r.Cost(providers.Usage{Input: 1_000_000, CachedInput: 500_000, Output: 100_000, Reasoning: 200_000}); !near(c, 2+2) {
		t.Fatalf("rates cost $%g; want $4 (1M input at $2, 200k reasoning beyond output at $10)", c)
	}
	var heard []*float64
	spend := providers.SpendFunc(func(u providers.Usage) string {
		heard = append(heard, u.CostUSD)
		return ""
	})
	loop := providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		req.Spend.Used(providers.Usage{Input: 1_000_000})
		req.Spend.Used(providers.Usage{Input: 1_000_000, CostUSD: usd(0.75)})
		return providers.Action{}, providers.Usage{Input: 1_000_000, Output: 100_000}, nil
	})
	_, u, err := WithRates(loop, "openrouter", r).Step(context.Background(), providers.Request{Spend: spend})
	if err != nil {
		t.Fatal(err)
	}
	if u.CostUSD == nil || !near(*u.CostUSD, 3) {
		t.Errorf("the step cost %v; want $3 at the rates", deref(u.CostUSD))
	}
	if len(heard) != 2 || heard[0] == nil || !near(*heard[0], 2) || heard[1] == nil || *heard[1] != 0.75 {
		t.Errorf("the Spend heard %v, %v; want $2 at the rates, then the adapter's own $0.75", deref(heard[0]), deref(heard[1]))
	}
	_, u, _ = WithRates(Priced(fixed{u: providers.Usage{Input: 1_000_000}}, "openai", "gpt-5-mini"), "openai", r).Step(context.Background(), providers.Request{})
	if u.CostUSD == nil || !near(*u.CostUSD, 0.25) {
		t.Errorf("a listed model cost %v; want its table price, $0.25", deref(u.CostUSD))
	}
}
