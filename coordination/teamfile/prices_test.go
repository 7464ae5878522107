package teamfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestATeamFileGivesAnAgentItsOwnPrices: price_in and price_out (USD per
// 1M tokens) price an agent whose model has no list price, so a cost
// budget can bound it; both are the operator's, listed as such.
func TestATeamFileGivesAnAgentItsOwnPrices(t *testing.T) {
	team := mustParse(t, "agents:\n  - {model: openrouter/qwen/qwen3-coder, price_in: 0.3, price_out: 1.2}\n  - {model: deepseek/deepseek-chat, price_in: 0, price_out: 1_000}\n  - {model: sim}\n")
	a, b, c := team.Agents[0], team.Agents[1], team.Agents[2]
	if a.PriceIn == nil || *a.PriceIn != 0.3 || a.PriceOut == nil || *a.PriceOut != 1.2 {
		t.Errorf("first agent's prices %v, %v; want 0.3 and 1.2", a.PriceIn, a.PriceOut)
	}
	if b.PriceIn == nil || *b.PriceIn != 0 || b.PriceOut == nil || *b.PriceOut != 1000 {
		t.Errorf("second agent's prices %v, %v; want 0 and 1000", b.PriceIn, b.PriceOut)
	}
	if c.PriceIn != nil || c.PriceOut != nil {
		t.Errorf("an agent with no prices got %v, %v", c.PriceIn, c.PriceOut)
	}
	for _, k := range []string{"agents[0].price_in", "agents[0].price_out", "agents[1].price_in"} {
		if !slices.Contains(team.Operator, k) {
			t.Errorf("operator-only settings %v lack %s", team.Operator, k)
		}
	}
}

// TestAnAgentsPricesAreBothGivenFiniteAndNotNegative: every refusal names
// the key and says what a price is.
func TestAnAgentsPricesAreBothGivenFiniteAndNotNegative(t *testing.T) {
	for yml, want := range map[string]string{
		"agents:\n  - {model: openrouter/m, price_in: -1, price_out: 2}\n":             "agents[0].price_in must be a number of USD per 1M tokens, 0 or more",
		"agents:\n  - {model: openrouter/m, price_in: 1, price_out: .nan}\n":           "agents[0].price_out must be a finite number",
		"agents:\n  - {model: openrouter/m, price_in: 1, price_out: .inf}\n":           "agents[0].price_out must be a finite number",
		"agents:\n  - {model: openrouter/m, price_in: cheap, price_out: 1}\n":          "agents[0].price_in must be a number",
		"agents:\n  - {model: openrouter/m, price_in: 1}\n":                            "agents[0] gives price_in without price_out",
		"agents:\n  - {model: openrouter/m, price_out: 1}\n":                           "agents[0] gives price_out without price_in",
		"agents:\n  - {model: sim, price_in: 1, price_out: 1}\n":                       "price_in and price_out do not apply to sim agents",
		"agents:\n  - {model: human, price_in: 1, price_out: 1}\n":                     "price_in and price_out do not apply to human agents",
		"agents:\n  - {model: openrouter/m, price_in: 1, price_out: 1, pric_out: 2}\n": "did you mean price_out?",
	} {
		_, err := parse(t, yml, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", yml, err, want)
			continue
		}
		if !errors.Is(err, coordination.ErrBadInput) || goTypeName.MatchString(err.Error()) {
			t.Errorf("%q: %v is not a plain bad-input message", yml, err)
		}
	}
}
