package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// cellWidth is one step's column in the swimlane: wide enough for
// "V agent_b #12" or "E bad_output" and a gap.
const cellWidth = 15

// Swimlane renders the timeline as one lane per agent (agents in the order
// given) and one column per landed step, in the order the steps landed:
// "A #1" the lane's agent's first answer, "V agent_b #2" a vote for
// agent_b's second, "E timeout" a failed step (labels, drawn per session,
// are translated: NamesOfLedger). Each column is headed by its time since start. Columns wrap
// to fit width (0: 100 characters).
func Swimlane(agents []string, l *coordination.Ledger, start time.Time, width int) string {
	if width <= 0 {
		width = 100
	}
	var steps []coordination.Entry
	for _, id := range agents {
		steps = append(steps, l.Agents[id]...)
	}
	if len(steps) == 0 {
		return "no steps yet\n"
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Time.Before(steps[j].Time) })
	name := 0
	for _, id := range agents {
		name = max(name, len(id))
	}
	name += 2
	perBlock := max(1, (width-name)/cellWidth)
	names := NamesOfLedger(l)
	var b strings.Builder
	for from := 0; from < len(steps); from += perBlock {
		block := steps[from:min(from+perBlock, len(steps))]
		if from > 0 {
			b.WriteString("\n")
		}
		head := fmt.Sprintf("%-*s", name, "")
		for _, e := range block {
			head += fmt.Sprintf("%-*s", cellWidth, offset(e.Time.Sub(start)))
		}
		b.WriteString(strings.TrimRight(head, " ") + "\n")
		for _, id := range agents {
			line := fmt.Sprintf("%-*s", name, id)
			for _, e := range block {
				cell := ""
				if e.Agent == id {
					cell = names.Cell(e)
				}
				line += fmt.Sprintf("%-*s", cellWidth, cell)
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	return b.String()
}

// Cell is a step's short form in a lane.
func (n Names) Cell(e coordination.Entry) string {
	var s string
	switch e.Kind {
	case coordination.KindAnswer:
		s = "A " + number(e.Label)
		if e.Label == "" { // a MassGen-written ledger stores no labels
			s = fmt.Sprintf("A step %d", e.Step)
		}
	case coordination.KindVote:
		s = "V " + e.TargetLabel
		if who := n.target(e.Target, e.TargetLabel); who != e.TargetLabel {
			s = "V " + strings.TrimSpace(who+" "+number(e.TargetLabel))
		}
	default:
		s = "E " + string(e.Class)
	}
	return clip(s, cellWidth-1)
}

// number is "#3" for label agentN.3, "" for no label.
func number(label string) string {
	if _, k, ok := parseAlias(label); ok && k > 0 {
		return fmt.Sprintf("#%d", k)
	}
	return ""
}

// offset is a duration since start, e.g. "+2.4s" or "+3m05s".
func offset(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("+%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("+%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "…"
}
