package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// A failed or dropped agent's reason is on the view, one masked line each,
// not only its class (which is all a card has room for).
func TestTheViewSaysWhyAnAgentFailedOrWasDropped(t *testing.T) {
	snap := snapshot("")
	ag := snap.Status.Agents
	ag[0].Model, ag[0].Status = "claude_code/claude-opus-4-6", "dropped"
	ag[0].LastError = "provider: claude_code exited with status 1 (key sk-dummy-PLANTED-not-a-key-0000)\n" + strings.Repeat("stderr noise ", 40) + "\nPrompt is too long"
	ag[3].Status = "error"
	ag[3].LastError = `provider: 401 Unauthorized {"error":{"message":"Invalid auth method selected"}}`
	m := NewModel(Options{Source: fixed{snap}, Now: func() time.Time { return t0.Add(20 * time.Second) }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(snapMsg{snap: snap, gen: 0})
	v := m.View()
	var lines []string
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(l, "agent_a (claude-opus-4-6) dropped (provider): claude_code exited") || strings.HasPrefix(l, "agent_d (sim) failed (provider): ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.HasSuffix(strings.TrimSpace(lines[0]), "Prompt is too long") ||
		strings.TrimSpace(lines[1]) != "agent_d (sim) failed (provider): Invalid auth method selected" {
		t.Errorf("want a reason line for each of agent_a and agent_d, got %q in:\n%s", lines, v)
	}
	if strings.Contains(v, "sk-dummy") {
		t.Errorf("the view shows a key:\n%s", v)
	}
	for _, want := range []string{"│ dropped (provider)", "│ failed (provider)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the cards lack %q:\n%s", want, v)
		}
	}
}
