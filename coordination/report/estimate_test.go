package report_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAnEstimateSaysWhichAgentsItPricedAtTheirOwnPrices: an agent whose
// model has no list price is priced at its own price_in/price_out (a team
// file's); `run --estimate` must say that figure is the agent's own, not a
// list price, while a listed model keeps its table price and says nothing
// more, and a refusal's figure says both were used.
func TestAnEstimateSaysWhichAgentsItPricedAtTheirOwnPrices(t *testing.T) {
	free := &coordtest.Scripted{}
	h := coordtest.New(t, map[string]providers.Provider{"openrouter/qwen/qwen3-coder": free, "openai/gpt-5.4": free})
	budget := 0.0001
	est, err := h.Service.Estimate(coordination.TeamSpec{Task: "What is 17 * 23?",
		Agents: []coordination.Agent{
			{ID: "cheap", Model: "openrouter/qwen/qwen3-coder", PriceIn: new(0.3), PriceOut: new(1.2), MaxOutputTokens: 1000},
			// A listed model's table price stands over its own prices.
			{ID: "listed", Model: "openai/gpt-5.4", PriceIn: new(0.3), PriceOut: new(1.2), MaxOutputTokens: 1000}},
		Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	if js := coordtest.JSON(est.Agents[0]); !strings.Contains(js, `"own_prices":true`) {
		t.Errorf("the estimate does not mark cheap as priced at its own prices: %s", js)
	}
	if js := coordtest.JSON(est.Agents[1]); strings.Contains(js, "own_prices") {
		t.Errorf("the listed model is marked as priced at its own prices: %s", js)
	}
	text := report.Estimate(est)
	lines := strings.Split(text, "\n")
	if !strings.Contains(lines[0], "own price_in/price_out") {
		t.Errorf("the heading says only list prices were used:\n%s", text)
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "  cheap ") && !strings.Contains(l, "at its own prices"):
			t.Errorf("cheap's line does not say its own prices priced it: %q", l)
		case strings.HasPrefix(l, "  listed ") && strings.Contains(l, "own prices"):
			t.Errorf("listed's line says its own prices priced it: %q", l)
		}
	}
	if !strings.Contains(est.Problem, "at list prices and cheap's own price_in/price_out in the worst case") {
		t.Errorf("the refusal's figure says only list prices were used: %s", est.Problem)
	}
}
