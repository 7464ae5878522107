package report

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// weightsText says, under consensus weighted, how much each agent's ballots
// counted and why, and how the weight fell or why round 0 stopped the run
// (the result's how_chosen_note): the structured result carries the same,
// but a person reading `run`, `status` or team_status's text must not have
// to open the JSON to learn that one agent outweighed three.
func weightsText(r *coordination.TeamResult, n Names) string {
	text := weights(r, n)
	if text != "" && r.HowChosenNote != "" {
		text += fmt.Sprintf("How: %s\n", r.HowChosenNote)
	}
	return text
}

// Weights is the weights block of a result under consensus weighted ("" under
// the other rules), for texts that print the how_chosen_note themselves
// (MCP's brief results).
func Weights(r *coordination.TeamResult) string { return weights(r, NamesOfResult(r)) }

func weights(r *coordination.TeamResult, n Names) string {
	if len(r.Consensus.Weights) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Weights (consensus weighted: each agent's answer and vote count its weight):\n")
	for _, w := range r.Consensus.Weights {
		fmt.Fprintf(&b, "  %s\n", weightLine(n.Agent(w.Agent), w))
	}
	return b.String()
}

// weightLine is "agent_b (gpt-5.4)'s vote counts 1.40: its first answer
// agreed …". The estimate's reasons start "counts W: "; a weight an operator
// wrote in a team file may carry any reason, or none.
func weightLine(who string, w coordination.VoteWeight) string {
	if rest, ok := strings.CutPrefix(w.Reason, "counts "); ok {
		return fmt.Sprintf("%s's vote counts %s", who, rest)
	}
	line := fmt.Sprintf("%s's vote counts %.2f", who, w.Weight)
	if w.Reason != "" {
		line += ": " + w.Reason
	}
	return line
}
