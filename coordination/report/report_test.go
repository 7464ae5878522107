package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

func ptr[T any](v T) *T { return &v }

// splitView is three agents: agent_a's and agent_c's votes stand for
// agent_b's answer agent1.2; agent_b's vote for agent2.1 went stale.
func splitView() *coordination.StatusView {
	return &coordination.StatusView{
		Result: &coordination.TeamResult{Consensus: coordination.ConsensusView{Rule: "majority", Leader: ptr("agent1.2"), Reached: true},
			Winner: &coordination.Winner{AgentID: "agent_b", Label: "agent1.2"}},
		Agents: []coordination.AgentStatus{
			{ID: "agent_a", Model: "openai/gpt-5.4", LatestLabel: "agent2.1", Status: "voted", StandingVote: true, Vote: &coordination.VoteView{Target: "agent_b", TargetLabel: "agent1.2"}},
			{ID: "agent_b", Model: "claude/claude-opus-4-6", LatestLabel: "agent1.2", Status: "answered", Vote: &coordination.VoteView{Target: "agent_a", TargetLabel: "agent2.1", Stale: true}},
			{ID: "agent_c", Status: "voted", StandingVote: true, Vote: &coordination.VoteView{Target: "agent_b", TargetLabel: "agent1.2"}},
		},
	}
}

func TestVoteGraphDrawsStandingAndStaleArrowsToAnswers(t *testing.T) {
	g := report.VoteGraph(splitView())
	for _, want := range []string{
		"agent_b (claude-opus-4-6), answer 2  ◀── agent_a, agent_c  2 votes  ★ winner",
		"agent_a (gpt-5.4), answer 1          ◀┄┄ agent_b (stale)  0 votes",
		"majority: 2 of 3 votes needed, 2 standing — reached",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("graph lacks %q:\n%s", want, g)
		}
	}
	if strings.Contains(g, "agent1") || strings.Contains(g, "agent2") {
		t.Errorf("the graph names answers by label, not by agent:\n%s", g)
	}
	if i, j := strings.Index(g, "agent_b ("), strings.Index(g, "agent_a ("); i > j {
		t.Errorf("answers are not in label order:\n%s", g)
	}
}

func TestVotesNeededFollowsTheRule(t *testing.T) {
	for _, c := range []struct {
		rule       coordination.ConsensusRule
		live, want int
	}{{"majority", 3, 2}, {"majority", 4, 3}, {"unanimous", 3, 3}, {"plurality", 3, 1}, {"plurality", 0, 0}} {
		if got := report.VotesNeeded(c.rule, c.live); got != c.want {
			t.Errorf("%s of %d: %d, want %d", c.rule, c.live, got, c.want)
		}
	}
}

func TestSwimlaneHasOneLanePerAgentAndAColumnPerStepInLandingOrder(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	l := &coordination.Ledger{Agents: map[string][]coordination.Entry{
		"agent_a": {{Agent: "agent_a", Step: 1, Kind: coordination.KindAnswer, Label: "agent2.1", Time: t0.Add(2 * time.Second)},
			{Agent: "agent_a", Step: 2, Kind: coordination.KindVote, TargetLabel: "agent1.1", Time: t0.Add(5 * time.Second)}},
		"agent_b": {{Agent: "agent_b", Step: 1, Kind: coordination.KindAnswer, Label: "agent1.1", Time: t0.Add(1 * time.Second)},
			{Agent: "agent_b", Step: 2, Kind: coordination.KindError, Class: "rate_limit", Time: t0.Add(90 * time.Second)}},
	}}
	got := report.Swimlane([]string{"agent_a", "agent_b"}, l, t0, 0)
	// Labels are translated: agent1.1 is agent_b's first answer.
	want := "" +
		"         +1.0s          +2.0s          +5.0s          +1m30s\n" +
		"agent_a                 A #1           V agent_b #1\n" +
		"agent_b  A #1                                         E rate_limit\n"
	if got != want {
		t.Fatalf("swimlane:\n%s\nwant:\n%s", got, want)
	}
	narrow := report.Swimlane([]string{"agent_a", "agent_b"}, l, t0, 40)
	if strings.Count(narrow, "agent_a") != 2 {
		t.Fatalf("a narrow swimlane should wrap into two blocks:\n%s", narrow)
	}
}

func TestCoordinationTablePutsEachEventInItsAgentsColumn(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.Local)
	evs := []coordination.Event{
		{Time: t0, Type: "session_created", Message: "team of 2 agents created"},
		{Time: t0, Agent: "agent_b", Type: "answer", Message: "agent_b answered agent1.1"},
	}
	got := report.CoordinationTable([]string{"agent_a", "agent_b"}, evs, 50)
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[0], "time      agent_a") || !strings.Contains(lines[2], "── team of 2 agents created") {
		t.Fatalf("table:\n%s", got)
	}
	col := strings.Index(lines[0], "agent_b")
	if strings.Index(lines[3], "answered agent1.1") != col {
		t.Fatalf("agent_b's event is not under its column:\n%s", got)
	}
}

func TestSessionsTableAndHumanUnits(t *testing.T) {
	p := &coordination.SessionPage{Total: 1, Sessions: []coordination.SessionSummary{{SessionID: "team_x", Status: "finished",
		Winner: &coordination.Winner{AgentID: "agent_b", Label: "agent1.2", Model: "openai/gpt-5.4"}, Agents: []string{"a", "b", "c"}, Duration: 75, Task: "What\nis 17 * 23?"}}}
	got := report.SessionsTable(p)
	for _, want := range []string{"ID", "WINNER", "team_x", "finished", "agent_b (gpt-5.4), answer 2", "1m15s", "unknown", "What is 17 * 23?"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if report.Duration(3725) != "1h02m" || report.Cost(ptr(0.5)) != "$0.5000" {
		t.Errorf("units: %s %s", report.Duration(3725), report.Cost(ptr(0.5)))
	}
}

// TestAnInterruptedResultSaysHowToResume: the outcome line of a session
// whose run died says so, when it was last alive and how to resume it.
func TestAnInterruptedResultSaysHowToResume(t *testing.T) {
	alive := time.Date(2026, 12, 2, 5, 0, 0, 0, time.Local)
	r := &coordination.TeamResult{SessionID: "team_x", Status: coordination.StatusInterrupted, LastAlive: &alive}
	got := report.Outcome(r)
	for _, want := range []string{"Interrupted", "2026-12-02 05:00:00", "run --resume team_x"} {
		if !strings.Contains(got, want) {
			t.Errorf("Outcome = %q, lacks %q", got, want)
		}
	}
}

// TestAnInterruptedResultWithoutAHeartbeatStillSaysHowToResume: a result
// marked interrupted with no heartbeat time (none was recorded) says so,
// where reading the time would have panicked the server's text.
func TestAnInterruptedResultWithoutAHeartbeatStillSaysHowToResume(t *testing.T) {
	got := report.Outcome(&coordination.TeamResult{SessionID: "s", Status: coordination.StatusInterrupted})
	if !strings.Contains(got, "last alive an unknown time") || !strings.Contains(got, "run --resume s") {
		t.Fatalf("outcome %q", got)
	}
}

// TestACancelledOutcomeSaysWhy: a cancelled session's outcome line gives
// its cancel reason, and no empty parentheses when it has none.
func TestACancelledOutcomeSaysWhy(t *testing.T) {
	r := &coordination.TeamResult{Status: coordination.StatusCancelled, CancelReason: "cancelled by request"}
	if got := report.Outcome(r); got != "No answer: the session was cancelled (by request)" {
		t.Errorf("Outcome = %q", got)
	}
	r.CancelReason = ""
	if got := report.Outcome(r); strings.Contains(got, "()") {
		t.Errorf("Outcome = %q", got)
	}
}

// TestASharedStoresSessionIsResumedThroughAServer: a session kept in a
// store a server's replicas share (PostgreSQL) is advised to resume
// through a server, never with run --resume (which reaches the file store
// only), and its summary names the place given, not a replica's directory.
func TestASharedStoresSessionIsResumedThroughAServer(t *testing.T) {
	at := report.Place{Shared: true, Name: "team_x, in the PostgreSQL store at db:5432/massgen"}
	r := &coordination.TeamResult{SessionID: "team_x", Status: coordination.StatusInterrupted, SessionDir: "sessions/team_x"}
	got := at.Outcome(r)
	if strings.Contains(got, "run --resume") || !strings.Contains(got, `run_team{session_id: "team_x"}`) || !strings.Contains(got, "/ui/") {
		t.Errorf("Outcome = %q, want run_team{session_id} and the web view, not run --resume", got)
	}
	md := at.Markdown(&coordination.StatusView{Result: r})
	if strings.Contains(md, "sessions/team_x") || strings.Contains(md, "run --resume") || !strings.Contains(md, "Session: team_x, in the PostgreSQL store at db:5432/massgen\n") {
		t.Errorf("Markdown:\n%s", md)
	}
	if md := report.Markdown(&coordination.StatusView{Result: r}); !strings.Contains(md, "Session: sessions/team_x\n") || !strings.Contains(md, "run --resume team_x") {
		t.Errorf("a file store's Markdown:\n%s", md)
	}
}
