package tui

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// failed splits an agent's last error ("class: message", status.go) into its
// class and message; ok is false when the agent is neither failed nor
// dropped. An agent trying again after a failure is "streaming" with its
// last error still set: its reason stays on the view until the new step
// lands, since that step may take minutes and the reason says whether it
// can succeed at all ("Prompt is too long").
func failed(a coordination.AgentStatus) (verb, class, msg string, ok bool) {
	switch {
	case a.Status == "error":
		verb = "failed"
	case a.Status == "dropped":
		verb = "dropped"
	case a.Status == "streaming" && a.LastError != "":
		verb = "failed"
	default:
		return "", "", "", false
	}
	class, msg, found := strings.Cut(a.LastError, ": ")
	if !found {
		class, msg = "", a.LastError
	}
	return verb, class, msg, true
}

// failures is one full-width line per failed or dropped agent, above the
// cards: a card is too narrow for "Prompt is too long" after its class, and
// the class alone does not say what to do. Above, because a frame taller
// than the terminal is cut at the bottom (main), and on 80x24 two rows of
// cards already fill it. The reason (coordination.Reason: masked, one line)
// is cut to what the line has room for, keeping its tail.
func (m *Model) failures() string {
	var b strings.Builder
	for _, a := range m.snap.Status.Agents {
		verb, class, msg, ok := failed(a)
		if !ok {
			continue
		}
		line := coordination.Who(a.ID, a.Model) + " " + verb
		if class != "" {
			line += " (" + class + ")"
		}
		if a.Status == "streaming" {
			line += ", trying again"
		}
		room := min(coordination.ReasonRunes, max(20, m.width-len([]rune(line))-2))
		if reason := coordination.Reason(msg, room); reason != "" {
			line += ": " + reason
		}
		fmt.Fprintln(&b, badStyle.Render(clip(line, m.width)))
	}
	return b.String()
}
