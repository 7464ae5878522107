package report

import (
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// StatusSections renders what a status adds to the agents table: the vote
// graph and the timeline swimlane, as markdown sections with the pictures in
// code blocks (they are monospace art). l is the session's ledger; nil leaves
// the swimlane out.
func StatusSections(v *coordination.StatusView, l *coordination.Ledger, width int) string {
	var b strings.Builder
	b.WriteString("\n**Vote graph** (◀── standing votes, ◀┄┄ stale or superseded)\n\n```\n")
	b.WriteString(VoteGraph(v))
	b.WriteString("```\n")
	if l != nil {
		ids := make([]string, len(v.Agents))
		for i, a := range v.Agents {
			ids[i] = a.ID
		}
		b.WriteString("\n**Timeline by agent** (A answer, V vote for, E failed step; a column per step as it landed)\n\n```\n")
		b.WriteString(Swimlane(ids, l, v.CreatedAt, width))
		b.WriteString("```\n")
	}
	return b.String()
}
