package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// VotesNeeded is how many standing votes one answer needs under a rule with
// live agents: a strict majority, all of them, or (plurality) one, when it
// is the only leader.
func VotesNeeded(rule coordination.ConsensusRule, live int) int {
	switch rule {
	case coordination.RuleUnanimous:
		return live
	case coordination.RulePlurality, coordination.RuleWeighted:
		// weighted: the most weight wins, so one ballot can suffice.
		return min(1, live)
	}
	return live/2 + 1
}

// Node is one answer in the vote graph: an agent's latest answer and the
// votes that point at it.
type Node struct {
	Label    string   // the answer's label, agentN.k
	Agent    string   // the real agent id that wrote it
	Model    string   // its model
	Standing []string // voters whose vote for it stands
	Stale    []string // voters whose vote for it (or an older answer of its agent) no longer counts
	Leader   bool     // the only answer with the most standing votes
	Winner   bool     // the session's winner
}

// Graph is the vote graph of a status view: its answer nodes in label order
// and the consensus it adds up to.
type Graph struct {
	Nodes   []Node
	Rule    coordination.ConsensusRule
	Live    int  // agents not dropped: the denominator
	Needed  int  // standing votes one answer needs
	Votes   int  // standing votes cast
	Reached bool // the session ended on agreement
	// MetSoFar: the session runs and its standing votes meet the rule
	// now; a later answer may make them stale.
	MetSoFar bool
}

// BuildGraph reads the vote graph off a status view.
func BuildGraph(v *coordination.StatusView) Graph {
	r := v.Result
	g := Graph{Rule: r.Consensus.Rule, Reached: r.Consensus.Reached, MetSoFar: metSoFar(r)}
	byAgent := map[string]int{}
	for _, a := range v.Agents {
		if a.Status != "dropped" {
			g.Live++
		}
		if a.LatestLabel == "" {
			continue
		}
		byAgent[a.ID] = len(g.Nodes)
		n := Node{Label: a.LatestLabel, Agent: a.ID, Model: a.Model}
		n.Leader = r.Consensus.Leader != nil && *r.Consensus.Leader == a.LatestLabel
		n.Winner = r.Winner != nil && r.Winner.AgentID == a.ID
		g.Nodes = append(g.Nodes, n)
	}
	for _, a := range v.Agents {
		vt := a.Vote
		if vt == nil {
			continue
		}
		i, ok := byAgent[vt.Target]
		if !ok {
			continue
		}
		if a.StandingVote {
			g.Nodes[i].Standing = append(g.Nodes[i].Standing, a.ID)
			g.Votes++
		} else {
			g.Nodes[i].Stale = append(g.Nodes[i].Stale, a.ID)
		}
	}
	sort.SliceStable(g.Nodes, func(i, j int) bool { return labelLess(g.Nodes[i].Label, g.Nodes[j].Label) })
	g.Needed = VotesNeeded(g.Rule, g.Live)
	return g
}

// labelLess orders agent2.1 before agent10.1.
func labelLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// VoteGraph renders the vote graph: one line per answer with the votes
// pointing at it (solid arrows standing, dotted ones stale), then what the
// rule needs.
func VoteGraph(v *coordination.StatusView) string {
	return BuildGraph(v).String()
}

// String renders the graph as plain text lines.
func (g Graph) String() string {
	var b strings.Builder
	if len(g.Nodes) == 0 {
		b.WriteString("no answers yet\n")
	}
	width := 0
	for _, n := range g.Nodes {
		width = max(width, len([]rune(n.head())))
	}
	for _, n := range g.Nodes {
		head := n.head()
		fmt.Fprintf(&b, "%s%s", head, strings.Repeat(" ", width-len([]rune(head))))
		if len(n.Standing) > 0 {
			fmt.Fprintf(&b, "  ◀── %s", strings.Join(n.Standing, ", "))
		}
		if len(n.Stale) > 0 {
			fmt.Fprintf(&b, "  ◀┄┄ %s (stale)", strings.Join(n.Stale, ", "))
		}
		fmt.Fprintf(&b, "  %s", Plural(len(n.Standing), "vote"))
		switch {
		case n.Winner:
			b.WriteString("  ★ winner")
		case n.Leader:
			b.WriteString("  ← leader")
		}
		b.WriteString("\n")
	}
	b.WriteString(g.Needs() + "\n")
	return b.String()
}

// head names an answer as people read it: "agent_b (gpt-5.4), answer 2".
func (n Node) head() string {
	return withOrdinal(coordination.Who(n.Agent, n.Model), n.Label)
}

// Needs says where the count stands against the rule, e.g. "majority: 2 of 3
// votes needed, 1 standing — not reached".
func (g Graph) Needs() string {
	return fmt.Sprintf("%s: %d of %d votes needed, %d standing — %s", g.Rule, g.Needed, g.Live, g.Votes, reachedWord(g.Reached, g.MetSoFar))
}

// metSoFar tells a running session whose standing votes meet its rule now.
func metSoFar(r *coordination.TeamResult) bool {
	return r.Status == coordination.StatusRunning && r.Consensus.RuleMet && !r.Consensus.Reached
}

// reachedWord is "reached" only for a session that ended on agreement; a
// running one whose votes meet the rule now is "met so far, not final",
// since the next answer may make them stale.
func reachedWord(reached, metSoFar bool) string {
	switch {
	case reached:
		return "reached"
	case metSoFar:
		return "met so far, not final"
	}
	return "not reached"
}

// Plural is "1 vote", "2 votes".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
