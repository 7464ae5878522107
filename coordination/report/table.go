package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// CoordinationTable renders every event of a session in order, one column per
// agent, as MassGen's coordination_table.txt lays it out: an agent's event
// sits in its column, a session event spans the row. Columns share width
// (0: 100 characters).
func CoordinationTable(agents []string, events []coordination.Event, width int) string {
	if width <= 0 {
		width = 100
	}
	const stamp = 10 // "15:04:05  "
	col := max(14, (width-stamp)/max(1, len(agents)))
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", stamp, "time")
	for _, id := range agents {
		fmt.Fprintf(&b, "%-*s", col, clip(id, col-2))
	}
	b.WriteString("\n" + strings.Repeat("─", stamp+col*len(agents)) + "\n")
	index := map[string]int{}
	for i, id := range agents {
		index[id] = i
	}
	for _, ev := range events {
		line := fmt.Sprintf("%-*s", stamp, ev.Time.Local().Format(time.TimeOnly))
		i, ok := index[ev.Agent]
		if !ok {
			line += "── " + ev.Message
		} else {
			line += strings.Repeat(" ", col*i) + clip(strings.TrimPrefix(ev.Message, ev.Agent+" "), col-2)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if len(events) == 0 {
		b.WriteString("no events yet\n")
	}
	return b.String()
}
