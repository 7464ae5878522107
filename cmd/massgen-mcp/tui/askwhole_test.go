package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestThePickedAskIsShownWholeAndEscaped: the ask y answers is not cut at
// the screen's edge (a long command hid its tail there), it names the
// whole command a yes runs, and a command's escape sequence or
// right-to-left override reaches the terminal only as its escape.
func TestThePickedAskIsShownWholeAndEscaped(t *testing.T) {
	long := "echo ok" + strings.Repeat(" ", 200) + "; git push origin main\x1b[2K\u202e"
	snap := snapshot("")
	snap.Pending = []permissions.ApprovalRequest{{ID: "abc", Agent: "agent_a", Action: permissions.Action{Kind: permissions.Git, Target: "push origin main\x1b[2K\u202e"},
		Risk: permissions.RiskExternal, Rule: "role workspace", Command: long}}
	m := NewModel(Options{Source: fixed{snap}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
	m.Update(snapMsg{snap: snap, gen: 0})
	v := m.View()
	if strings.ContainsAny(v, "\u202e") || strings.Contains(v, "\x1b[2K") {
		t.Errorf("the view passes the command's escape or override to the terminal:\n%q", v)
	}
	flat := strings.ReplaceAll(v, "\n", "")
	if !strings.Contains(flat, `git push origin main\x1b[2K\u202e`) || !strings.Contains(flat, "y approve") {
		t.Errorf("the picked ask is not shown whole, with the command's tail:\n%s", v)
	}
}
