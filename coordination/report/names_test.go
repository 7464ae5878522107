package report_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// namesSession is a team whose aliases do not follow its ids: agent1 is
// agent_b, agent2 is agent_a.
func namesSession() *coordination.Session {
	return &coordination.Session{
		Agents:  []coordination.Agent{{ID: "agent_a", Model: "claude/claude-opus-4-6"}, {ID: "agent_b", Model: "openai/gpt-5.4"}, {ID: "agent_c", Model: "sim"}},
		Aliases: map[string]int{"agent_a": 2, "agent_b": 1, "agent_c": 3},
	}
}

// TestTheAgentsOwnWordsAreTranslatedToIds: a vote reason says "agent1"
// (an alias) and "agent2.1" (a label); a person reads ids.
func TestTheAgentsOwnWordsAreTranslatedToIds(t *testing.T) {
	n := report.NamesOfSession(namesSession())
	for in, want := range map[string]string{
		"agent1 shows the working; agent2.1 does not.": "agent_b shows the working; agent_a's answer 1 does not.",
		"[agent2.3] beats agent3":                      "[agent_a's answer 3] beats agent_c",
		"agent10 and agent_x and myagent1 stay":        "agent10 and agent_x and myagent1 stay",
		"agent1.":                                      "agent_b.",
	} {
		if got := n.Words(in); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
	if got := n.Quote("Best:\nagent1", 80); got != `"Best: agent_b"` {
		t.Errorf("Quote = %s", got)
	}
}

// TestALineNamesAgentsByIdAndModelNotByLabel: the lines coordination
// writes (progress, timeline) name answers by label; a person reads the
// agent and its model, and which of its answers.
func TestALineNamesAgentsByIdAndModelNotByLabel(t *testing.T) {
	n := report.NamesOfSession(namesSession())
	for _, c := range []struct{ in, subject, want string }{
		{"agent_c (sim) voted for agent_a [agent2.3] — 1 of 3 votes for [agent2.3]", "agent_c",
			"agent_c (sim) voted for agent_a (claude-opus-4-6), answer 3 — 1 of 3 votes"},
		{"agent_c (sim) voted for agent_a [agent2.3] (stale)", "agent_c", "agent_c (sim) voted for agent_a (claude-opus-4-6), answer 3 (stale)"},
		{"agent_c (sim) voted for [agent2.3]", "agent_c", "agent_c (sim) voted for agent_a (claude-opus-4-6), answer 3"},
		{"agent_b (gpt-5.4) answered [agent1.1]", "agent_b", "agent_b (gpt-5.4) answered (answer 1)"},
		{"agent_a (claude-opus-4-6) [agent2.3] wins (consensus, consensus)", "", "agent_a (claude-opus-4-6) wins (consensus, consensus)"},
		{"agent_c voted for agent1.2 (re-vote)", "agent_c", "agent_c voted for agent_b (gpt-5.4), answer 2 (re-vote)"},
		{"agent_c answered agent3.1", "agent_c", "agent_c answered (answer 1)"},
		{"agent_c (sim) voted for [agent3.1]", "agent_c", "agent_c (sim) voted for its own answer 1"},
		{"agent_c failed (provider): Prompt is too long", "agent_c", "agent_c failed (provider): Prompt is too long"},
	} {
		got := n.Message(c.in, c.subject)
		if got != c.want {
			t.Errorf("Message(%q) =\n %q, want\n %q", c.in, got, c.want)
		}
		if strings.Contains(got, "[agent") {
			t.Errorf("%q still shows a label", got)
		}
	}
}

// TestAResultAloneTranslatesTheAliasesItsLabelsReveal: a TeamResult
// carries no alias map (the wire keeps its shape); its labels say which
// alias is whose.
func TestAResultAloneTranslatesTheAliasesItsLabelsReveal(t *testing.T) {
	r := &coordination.TeamResult{
		Status: coordination.StatusFinished, Winner: &coordination.Winner{AgentID: "agent_a", Label: "agent2.3", Model: "claude/claude-opus-4-6"},
		Agents: []coordination.AgentUsage{{AgentID: "agent_a", Model: "claude/claude-opus-4-6"}, {AgentID: "agent_c", Model: "sim"}},
		Votes:  []coordination.VoteView{{Voter: "agent_c", Target: "agent_a", TargetLabel: "agent2.3", Reason: "agent2 shows the working"}},
	}
	got := report.Summary(r)
	want := `agent_c (sim) → agent_a (claude-opus-4-6), answer 3, standing: "agent_a shows the working"`
	if !strings.Contains(got, want) {
		t.Fatalf("summary lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "agent2") {
		t.Fatalf("summary shows an alias or label as a name:\n%s", got)
	}
}
