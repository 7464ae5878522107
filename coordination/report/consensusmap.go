package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"unicode"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The consensus map's geometry, in SVG user units; the picture scales with
// its viewBox, so these fix proportions, not pixels.
const (
	mapNodeW   = 176.0
	mapNodeH   = 62.0
	mapMargin  = 24.0
	mapCaption = 34.0
	// mapPitch is the arc length one node takes on the ring: it sets the
	// ring's radius, so 16 agents do not overlap.
	mapPitch = 200.0
	// mapBend is how far an arrow bows from the straight line, so a vote
	// each way between two agents reads as two arrows, not one line.
	mapBend = 0.12
)

// ConsensusMapSVG renders a status view as a consensus map: an SVG of one
// node per agent (its id, model, status, standing votes for its latest
// answer and cost), placed on a ring in the view's order, with an arrow from
// each voter to the author of the answer it voted for — solid when the vote
// stands, dashed when it is stale — and the winner (or, before a decision,
// the leader) outlined. Below the ring it says what the rule needs
// (Graph.Needs).
//
// The markup is deterministic for a view (a golden test pins it), every text
// is escaped and stripped of control characters, and it holds no script, no
// external reference and no style sheet (presentation attributes only), so
// it can be inlined in the web view's page or served alone in an MCP App.
// Nodes carry data-agent, arrows data-voter and data-target (agent ids), and
// classes (cm-node, cm-winner, cm-leader, cm-status-<status>, cm-vote,
// cm-standing, cm-stale) for pages and tests to select on.
func ConsensusMapSVG(v *coordination.StatusView) string {
	g := BuildGraph(v)
	n := len(v.Agents)
	radius := 0.0
	if n > 1 {
		radius = max(mapPitch*float64(n)/(2*math.Pi), mapNodeW*0.75)
	}
	w := 2*radius + mapNodeW + 2*mapMargin
	h := 2*radius + mapNodeH + 2*mapMargin + mapCaption
	cx, cy := w/2, mapMargin+radius+mapNodeH/2

	pos := make(map[string][2]float64, n)
	for i, a := range v.Agents {
		// The first agent sits at the top, the rest clockwise.
		angle := -math.Pi/2 + 2*math.Pi*float64(i)/float64(max(n, 1))
		pos[a.ID] = [2]float64{cx + radius*math.Cos(angle), cy + radius*math.Sin(angle)}
	}
	targets := voteTargets(v, pos)
	votes := make(map[string]int, n)
	for _, a := range v.Agents {
		if t, ok := targets[a.ID]; ok && standing(a) {
			votes[t]++
		}
	}
	leader, winner := "", ""
	for _, nd := range g.Nodes {
		if nd.Winner {
			winner = nd.Agent
		}
		if nd.Leader {
			leader = nd.Agent
		}
	}
	if winner == "" && v.Result != nil && v.Result.Winner != nil {
		winner = v.Result.Winner.AgentID
	}

	var b strings.Builder
	title := "Consensus map: " + Plural(n, "agent")
	if winner != "" {
		title += ", winner " + winner
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="consensus-map" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-labelledby="cm-title" font-family="system-ui, sans-serif" font-size="13">`,
		num(w), num(h), num(w), num(h))
	fmt.Fprintf(&b, "\n<title id=\"cm-title\">%s</title>\n", svgText(title))
	b.WriteString(`<defs>` +
		`<marker id="cm-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#2563eb"/></marker>` +
		`<marker id="cm-head-stale" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#9ca3af"/></marker>` +
		"</defs>\n")

	// Arrows first, so nodes are drawn over their ends.
	for _, a := range v.Agents {
		if t, ok := targets[a.ID]; ok {
			writeArrow(&b, a.ID, t, pos[a.ID], pos[t], !standing(a), a.Vote.TargetLabel)
		}
	}

	for _, a := range v.Agents {
		writeNode(&b, a, pos[a.ID], votes[a.ID], a.ID == winner, a.ID == leader && winner == "")
	}

	if n == 0 {
		fmt.Fprintf(&b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" fill=\"#6b7280\">no agents</text>\n", num(cx), num(cy))
	}
	fmt.Fprintf(&b, "<text class=\"cm-needs\" x=\"%s\" y=\"%s\" text-anchor=\"middle\" fill=\"#374151\">%s</text>\n",
		num(cx), num(h-mapMargin/2-4), svgText(g.Needs()))
	b.WriteString("</svg>\n")
	return b.String()
}

// voteTargets maps each voter on the map to the agent whose answer it
// voted for.
func voteTargets(v *coordination.StatusView, pos map[string][2]float64) map[string]string {
	byAlias := make(map[string]string, len(v.Agents))
	for _, a := range v.Agents {
		if a.Alias != "" {
			byAlias[a.Alias] = a.ID
		}
	}
	out := make(map[string]string, len(v.Agents))
	for _, a := range v.Agents {
		if a.Vote == nil {
			continue
		}
		target := a.Vote.Target
		if target == "" {
			// A view built by hand may name only the label (agentN.k): its
			// alias part names the author.
			alias, _, _ := strings.Cut(a.Vote.TargetLabel, ".")
			target = byAlias[alias]
		}
		if _, ok := pos[target]; ok {
			out[a.ID] = target
		}
	}
	return out
}

// standing says whether an agent's vote still counts.
func standing(a coordination.AgentStatus) bool {
	return a.StandingVote && a.Vote != nil && !a.Vote.Stale
}

// writeArrow draws one vote: a gently bowed line between the two nodes'
// edges, or a loop above the node for a vote for one's own answer.
func writeArrow(b *strings.Builder, voter, target string, from, to [2]float64, stale bool, label string) {
	class, stroke, dash, head := "cm-vote cm-standing", "#2563eb", "", "cm-head"
	if stale {
		class, stroke, dash, head = "cm-vote cm-stale", "#9ca3af", ` stroke-dasharray="6 4"`, "cm-head-stale"
	}
	var d string
	if voter == target {
		x, y := from[0], from[1]-mapNodeH/2
		d = fmt.Sprintf("M%s,%s C%s,%s %s,%s %s,%s", num(x-18), num(y), num(x-30), num(y-30), num(x+30), num(y-30), num(x+18), num(y))
	} else {
		dx, dy := to[0]-from[0], to[1]-from[1]
		t := edge(dx, dy)
		sx, sy := from[0]+t*dx, from[1]+t*dy
		ex, ey := to[0]-t*dx, to[1]-t*dy
		// Bow to the left of the direction of travel: A→B and B→A part.
		mx, my := (sx+ex)/2-dy*mapBend, (sy+ey)/2+dx*mapBend
		d = fmt.Sprintf("M%s,%s Q%s,%s %s,%s", num(sx), num(sy), num(mx), num(my), num(ex), num(ey))
	}
	fmt.Fprintf(b, "<path class=\"%s\" data-voter=\"%s\" data-target=\"%s\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s marker-end=\"url(#%s)\"><title>%s</title></path>\n",
		class, svgText(voter), svgText(target), d, stroke, dash, head, svgText(voteTitle(voter, target, label, stale)))
}

// voteTitle is the arrow's tooltip: "agent_a voted for agent_b (agent1.2)".
func voteTitle(voter, target, label string, stale bool) string {
	s := voter + " voted for " + target
	if label != "" {
		s += " (" + label + ")"
	}
	if stale {
		s += ", stale"
	}
	return s
}

// edge is the fraction of a centre-to-centre vector (dx, dy) that lies
// inside a node's box, so an arrow starts and ends at the boxes' borders.
func edge(dx, dy float64) float64 {
	t := math.Inf(1)
	if dx != 0 {
		t = (mapNodeW/2 + 4) / math.Abs(dx)
	}
	if dy != 0 {
		t = min(t, (mapNodeH/2+4)/math.Abs(dy))
	}
	return min(t, 0.5)
}

// writeNode draws one agent: a box with its id, model, and status line.
func writeNode(b *strings.Builder, a coordination.AgentStatus, at [2]float64, votes int, winner, leader bool) {
	class := "cm-node cm-status-" + classWord(a.Status)
	fill, stroke, width := "#ffffff", "#6b7280", "1.5"
	switch {
	case winner:
		class += " cm-winner"
		fill, stroke, width = "#fef3c7", "#d97706", "4"
	case leader:
		class += " cm-leader"
		stroke, width = "#2563eb", "3"
	}
	if a.Status == "dropped" || a.Status == "error" || a.Status == "interrupted" {
		fill = "#f3f4f6"
	}
	x, y := at[0]-mapNodeW/2, at[1]-mapNodeH/2
	head := a.ID
	if winner {
		head = "★ " + head
	}
	status := a.Status + " · " + Plural(votes, "vote")
	if c := a.Usage.CostUSD; c != nil {
		status += fmt.Sprintf(" · $%.4f", *c)
	}
	fmt.Fprintf(b, "<g class=\"%s\" data-agent=\"%s\"><title>%s</title>", class, svgText(a.ID), svgText(coordination.Who(a.ID, a.Model)+", "+a.Status))
	fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" rx=\"8\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>",
		num(x), num(y), num(mapNodeW), num(mapNodeH), fill, stroke, width)
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"#111827\">%s</text>", num(at[0]), num(y+19), svgText(clip(head, 24)))
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" fill=\"#374151\" font-size=\"11\">%s</text>", num(at[0]), num(y+35), svgText(clip(a.Model, 28)))
	fmt.Fprintf(b, "<text class=\"cm-status\" x=\"%s\" y=\"%s\" text-anchor=\"middle\" fill=\"#4b5563\" font-size=\"11\">%s</text></g>\n", num(at[0]), num(y+51), svgText(clip(status, 32)))
}

// num prints a coordinate with one decimal, the same on every platform.
func num(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if s == "-0.0" {
		s = "0.0"
	}
	return strings.TrimSuffix(s, ".0")
}

// svgText escapes text for SVG (XML) and drops control characters, which
// XML cannot carry at all.
func svgText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return html.EscapeString(s)
}

// classWord keeps a status usable as a class name whatever it holds.
func classWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return '-'
	}, s)
}
