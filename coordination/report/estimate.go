package report

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Estimate renders a team's worst-case cost before it runs: `run
// --estimate` and run_team{estimate: true} print the same text.
func Estimate(e *coordination.Estimate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Estimate for %s, worst case %s (nothing was run or spent):\n", coordination.Count(len(e.Agents), "agent"), e.PricedAt())
	assumed := false
	for _, a := range e.Agents {
		reply := fmt.Sprintf("%d", a.OutputTokens)
		if a.OutputAssumed {
			reply += "*"
			assumed = true
		}
		step, whole := "no list price", ""
		switch {
		case a.CostUSD != nil && *a.CostUSD == 0:
			step = "free"
		case a.CostUSD != nil:
			step = "$" + coordination.Dollars(*a.CostUSD) + " a step"
			whole = ", $" + coordination.Dollars(*a.SessionCostUSD) + " in all"
		}
		if a.OwnPrices {
			// The operator's figure, not the price table's: say so where
			// the figure is read.
			whole += ", at its own prices"
		}
		fmt.Fprintf(&b, "  %s (%s): prompt ~%d + reply %s tokens: %s%s\n", a.AgentID, a.Model, a.InputTokens, reply, step, whole)
	}
	fmt.Fprintf(&b, "One round: $%s, ~%d tokens. Every step the rules allow: $%s, ~%d tokens.\n",
		coordination.Dollars(e.RoundCostUSD), e.RoundTokens, coordination.Dollars(e.SessionCostUSD), e.SessionTokens)
	if len(e.Unpriced) > 0 {
		fmt.Fprintf(&b, "Not in the dollar figures (no list price, no price_in/price_out): %s.\n", strings.Join(e.Unpriced, ", "))
	}
	if assumed {
		fmt.Fprintf(&b, "* no max_output_tokens set: a reply of %d tokens is assumed.\n", coordination.DefaultEstimateOutputTokens)
	}
	switch {
	case e.Problem != "":
		fmt.Fprintf(&b, "Refused as it stands: %s.\n", e.Problem)
	case e.CostBudgetUSD != nil || e.TokenBudget != nil:
		b.WriteString("The budget pays for one round; the run stops when the next step would pass it.\n")
	}
	return b.String()
}
