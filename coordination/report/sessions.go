package report

import (
	"fmt"
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
	for _, s := range p.Sessions {
		winner := "—"
		if s.Winner != nil {
			winner = withOrdinal(coordination.Who(s.Winner.AgentID, s.Winner.Model), s.Winner.Label)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.SessionID, s.Status, winner, len(s.Agents),
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
