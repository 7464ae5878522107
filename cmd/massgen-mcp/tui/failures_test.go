package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/massgen-go/massgen-mcp/coordination"
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

// A frame taller than the terminal is cut at the bottom; the reasons are
// what a reader of a failing run needs most, so they survive the cut on an
// 80x24 terminal with six agents (three rows of cards).
func TestTheReasonsFitAnEightyByTwentyFourTerminal(t *testing.T) {
	snap := snapshot("")
	for _, id := range []string{"agent_e", "agent_f"} {
		snap.Status.Agents = append(snap.Status.Agents, coordination.AgentStatus{ID: id, Model: "sim", Status: "waiting"})
	}
	ag := snap.Status.Agents
	ag[4].Status, ag[4].LastError = "error", "provider: Prompt is too long"
	ag[5].Status, ag[5].LastError = "dropped", `provider: 401 {"error":{"message":"Invalid auth method selected"}}`
	m := NewModel(Options{Source: fixed{snap}, Now: func() time.Time { return t0.Add(20 * time.Second) }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(snapMsg{snap: snap, gen: 0})
	v := m.View()
	if n := strings.Count(v, "\n") + 1; n > 24 {
		t.Fatalf("the frame has %d lines on a 24-line terminal:\n%s", n, v)
	}
	for _, want := range []string{"agent_e (sim) failed (provider): Prompt is too long", "agent_f (sim) dropped (provider): Invalid auth method selected"} {
		if !strings.Contains(v, want) {
			t.Errorf("an 80x24 view lacks %q:\n%s", want, v)
		}
	}
}

// An agent whose step failed is launched again, and its card reads
// "thinking" for as long as that takes (minutes, for a CLI); the reason of
// the failure stays on the view meanwhile, since it says whether the new
// try can succeed at all.
func TestAnAgentTryingAgainKeepsItsLastFailureOnTheView(t *testing.T) {
	snap := snapshot("")
	snap.Status.Agents[0].Model = "claude_code/claude-opus-4-6"
	snap.Status.Agents[0].LastError = "provider: claude exited with status 1\nPrompt is too long"
	m := NewModel(Options{Source: fixed{snap}, Now: func() time.Time { return t0.Add(20 * time.Second) }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
	m.Update(snapMsg{snap: snap, gen: 0})
	v := m.View()
	if want := "agent_a (claude-opus-4-6) failed (provider), trying again: claude exited with status 1 Prompt is too long"; !strings.Contains(v, want) {
		t.Errorf("the view lacks %q:\n%s", want, v)
	}
	if !strings.Contains(v, "thinking for 12s") {
		t.Errorf("the card of the agent trying again does not say it is thinking:\n%s", v)
	}
	if strings.Contains(v, "agent_d (sim) failed") {
		t.Errorf("an agent streaming without a failure reads as failed:\n%s", v)
	}
}
