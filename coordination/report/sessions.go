package report

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// SessionsTable renders a page of sessions, newest first: id, status, winner,
// agents, start, duration, cost and a task preview.
func SessionsTable(p *coordination.SessionPage) string {
	var b strings.Builder
	if len(p.Sessions) == 0 {
		b.WriteString("no sessions\n")
		return b.String()
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tWINNER\tAGENTS\tSTARTED\tDURATION\tCOST\tTASK")
	for _, s := range groupTurns(p.Sessions) {
		winner := "—"
		if s.Winner != nil {
			winner = withOrdinal(coordination.Who(s.Winner.AgentID, s.Winner.Model), s.Winner.Label)
		}
		id := s.SessionID
		if s.Turn > 0 {
			id = fmt.Sprintf("  └ turn %d %s", s.Turn, s.SessionID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", id, s.Status, winner, len(s.Agents),
			s.CreatedAt.Local().Format("2006-01-02 15:04"), Duration(s.Duration), Cost(s.CostUSD), clip(oneLine(s.Task), 48))
	}
	tw.Flush()
	return b.String()
}

// Duration is a run's length for people: "12.3s", "4m05s", "1h02m".
func Duration(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Cost is a cost in USD, or "unknown" when some price is not known.
func Cost(usd *float64) string {
	if usd == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *usd)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// groupTurns orders a page so the turns of a conversation stand together:
// each conversation where its newest turn falls, its first turn then the
// later ones in order, indented under it.
func groupTurns(in []coordination.SessionSummary) []coordination.SessionSummary {
	byConv := map[string][]coordination.SessionSummary{}
	for _, s := range in {
		if s.Conversation != "" {
			byConv[s.Conversation] = append(byConv[s.Conversation], s)
		}
	}
	if len(byConv) == 0 {
		return in
	}
	out := make([]coordination.SessionSummary, 0, len(in))
	done := map[string]bool{}
	for _, s := range in {
		conv := s.Conversation
		if conv == "" {
			if _, ok := byConv[s.SessionID]; !ok {
				out = append(out, s)
			}
			continue
		}
		if done[conv] {
			continue
		}
		done[conv] = true
		turns := byConv[conv]
		sort.SliceStable(turns, func(i, j int) bool { return turns[i].Turn < turns[j].Turn })
		for _, f := range in {
			if f.SessionID == conv {
				out = append(out, f)
			}
		}
		out = append(out, turns...)
	}
	return out
}
