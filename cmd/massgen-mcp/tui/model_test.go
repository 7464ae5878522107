package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/permissions"
)

type fixed struct{ snap *Snapshot }

func (f fixed) Snapshot(context.Context) (*Snapshot, error) { return f.snap, nil }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func snapshot(files string) *Snapshot {
	label := "agent1.2"
	return &Snapshot{
		Files: files,
		Status: &coordination.StatusView{
			Task: "What is 17 * 23?", CreatedAt: t0,
			Rules: coordination.Rules{Consensus: "majority", MaxRounds: 5, TimeoutSeconds: 1800},
			Result: &coordination.TeamResult{SessionID: "s", Status: coordination.StatusRunning,
				Consensus: coordination.ConsensusView{Rule: "majority", Leader: &label},
				Answers:   []coordination.AnswerView{{AgentID: "agent_b", Label: "agent1.2", Model: "sim", Content: "line one\nAnswer: 391"}},
				Votes: []coordination.VoteView{{Voter: "agent_c", Target: "agent_b", TargetLabel: "agent1.1", Stale: true,
					Reason: "agent1 checks the product; agent2.1 does not"}}},
			Agents: []coordination.AgentStatus{
				{ID: "agent_a", Alias: "agent3", Model: "sim", Status: "streaming", Steps: 2},
				{ID: "agent_b", Alias: "agent1", Model: "sim", Status: "voted", LatestLabel: "agent1.2", Answers: 2, StandingVote: true,
					Vote: &coordination.VoteView{Target: "agent_b", TargetLabel: "agent1.2"}},
				{ID: "agent_c", Alias: "agent2", Model: "sim", Status: "answered", LatestLabel: "agent2.1", Answers: 1,
					Vote: &coordination.VoteView{Target: "agent_b", TargetLabel: "agent1.1", Stale: true}},
				{ID: "agent_d", Alias: "agent4", Model: "sim", Status: "streaming", Steps: 1},
			},
		},
		Events: []coordination.Event{{Time: t0.Add(8 * time.Second), Type: "step_started", Agent: "agent_a", Step: 3}},
	}
}

func model(t *testing.T, files string, live *Live) *Model {
	t.Helper()
	m := NewModel(Options{Source: fixed{snapshot(files)}, Live: live, Now: func() time.Time { return t0.Add(20 * time.Second) }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
	m.Update(snapMsg{snap: snapshot(files), gen: 0})
	return m
}

func press(m *Model, keys ...string) string {
	for _, k := range keys {
		msg := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		if k == "esc" {
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		}
		m.Update(msg)
	}
	return m.View()
}

func TestCardsSayEachAgentsStateInWords(t *testing.T) {
	live := NewLive()
	live.Activity(coordination.Activity{Agent: "agent_a", Step: 3, Kind: "text", Text: "17 * 23 = 391 as agent1 says", Time: t0})
	live.Activity(coordination.Activity{Agent: "agent_d", Step: 2, Kind: "retry", Wait: 8 * time.Second, Err: "rate_limit: slow down", Time: t0.Add(19 * time.Second)})
	v := model(t, "", live).View()
	for _, want := range []string{
		"thinking for 12s", "17 * 23 = 391 as agent_b says", // agent_a: since its step_started event, with its streamed text translated
		"retrying in 7s — failed: rate_l", // agent_d: a retry pending
		"voted → agent_b, answer 2", "vote → agent_b, answer 1 (stale)", "answered (answer 1)", "latest: answer 2 of 2 answers",
		"rounds [████░░░░░░] 2/5", "3 of 4 votes needed", "1 step ·", "2 steps ·"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

// TestTheLiveViewNamesAgentsByIdAndTranslatesVoteReasons: no label is a
// name on a card, and a vote's reason saying "agent1" (agent_b's alias
// this session) reads "agent_b".
func TestTheLiveViewNamesAgentsByIdAndTranslatesVoteReasons(t *testing.T) {
	v := model(t, "", nil).View()
	want := `agent_c (sim) → agent_b (sim), answer 1 (stale): "agent_b checks the product; agent_c's answer 1 does not"`
	if !strings.Contains(v, want) {
		t.Errorf("view lacks %q:\n%s", want, v)
	}
	if strings.Contains(v, "agent1") || strings.Contains(v, "agent2") {
		t.Errorf("the view shows an alias or a label:\n%s", v)
	}
}

func TestKeysOpenTheTableAnAnswerAndFilesOnlyWhenThereAreFiles(t *testing.T) {
	m := model(t, "", nil)
	if v := m.View(); strings.Contains(v, "f winner's files") {
		t.Fatalf("f is offered without workspaces:\n%s", v)
	}
	if v := press(m, "f"); strings.Contains(v, "Winner's files") {
		t.Fatal("f opened files that do not exist")
	}
	if v := press(m, "r"); !strings.Contains(v, "Coordination table") || !strings.Contains(v, "started step") && !strings.Contains(v, "agent_a") {
		t.Fatalf("r:\n%s", v)
	}
	press(m, "esc")
	if v := press(m, "a"); !strings.Contains(v, "read whose answer? 1 agent_a · 2 agent_b") {
		t.Fatalf("a:\n%s", v)
	}
	if v := press(m, "2"); !strings.Contains(v, "Latest answer of agent_b") || !strings.Contains(v, "Answer: 391") {
		t.Fatalf("a 2:\n%s", v)
	}
	if v := press(m, "esc"); !strings.Contains(v, "Consensus map") {
		t.Fatalf("esc:\n%s", v)
	}
	dir := t.TempDir()
	m = model(t, dir, nil)
	if v := m.View(); !strings.Contains(v, "f winner's files") {
		t.Fatalf("f is not offered with a workspace:\n%s", v)
	}
	if v := press(m, "f"); !strings.Contains(v, "Winner's files — "+dir) {
		t.Fatalf("f:\n%s", v)
	}
}

func TestQCancelsARunButOnlyLeavesAWatch(t *testing.T) {
	m := model(t, "", nil)
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil || !m.Cancelled {
		t.Fatal("q should quit and cancel the run")
	}
	w := NewModel(Options{Source: fixed{snapshot("")}, Watching: true})
	if _, cmd := w.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil || w.Cancelled {
		t.Fatal("q should leave a watch without cancelling anything")
	}
}

func TestTheLastFrameIsReadAfterTheRunEnds(t *testing.T) {
	m := model(t, "", nil)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")}) // a snapshot asked for before the end…
	stale := m.gen
	m.Update(FinishMsg{})
	if _, cmd := m.Update(snapMsg{snap: snapshot(""), gen: stale}); cmd != nil && m.final > stale {
		// …must not end the view: the frame it draws may predate the end.
		if msg := cmd(); msg != nil {
			if _, ok := msg.(tea.QuitMsg); ok {
				t.Fatal("quit on a snapshot older than the end")
			}
		}
	}
	if _, cmd := m.Update(snapMsg{snap: snapshot(""), gen: m.final}); cmd == nil {
		t.Fatal("the snapshot read after the end should close the view")
	}
}

func TestTheViewSaysTheOutcomeAsEveryOtherSurface(t *testing.T) {
	how, stop := "consensus", coordination.StopConsensus
	reason := coordination.StopAgentsFailed
	for _, tc := range []struct {
		name string
		edit func(r *coordination.TeamResult)
	}{
		{"a winner", func(r *coordination.TeamResult) {
			r.Status, r.HowChosen, r.StopReason = coordination.StatusFinished, &how, &stop
			r.Winner = &coordination.Winner{AgentID: "agent_b", Label: "agent1.2", Model: "sim"}
		}},
		{"a failure", func(r *coordination.TeamResult) { r.Status, r.StopReason = coordination.StatusFailed, &reason }},
		{"a cancel", func(r *coordination.TeamResult) { r.Status = coordination.StatusCancelled }},
	} {
		snap := snapshot("")
		tc.edit(snap.Status.Result)
		m := NewModel(Options{Source: fixed{snap}, Now: func() time.Time { return t0.Add(20 * time.Second) }})
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
		m.Update(snapMsg{snap: snap, gen: 0})
		want := report.Outcome(snap.Status.Result)
		if want == "" || !strings.Contains(m.View(), want) {
			t.Errorf("%s: the view lacks the outcome line %q:\n%s", tc.name, want, m.View())
		}
	}
}

// TestAWatchReadsAgainThoughNothingChanged: a run that dies writes nothing
// the watch sees, so a watching view reads the session every WatchReread
// anyway, and so sees it interrupted.
func TestAWatchReadsAgainThoughNothingChanged(t *testing.T) {
	now := time.Now()
	w := NewModel(Options{Source: fixed{snapshot("")}, Watching: true, Changed: make(chan struct{}), Now: func() time.Time { return now }})
	w.Update(tickMsg(now)) // the first read
	w.Update(snapMsg{snap: snapshot(""), gen: w.gen})
	before := w.gen
	now = now.Add(WatchReread / 2)
	if w.Update(tickMsg(now)); w.gen != before {
		t.Fatal("a watching view read again before WatchReread")
	}
	now = now.Add(WatchReread)
	w.Update(tickMsg(now))
	if w.gen == before {
		t.Fatalf("a watching view with a silent watch did not read the session again after %v", WatchReread)
	}
}

// TestACardSaysAnAgentsStepDied: an agent whose step died with its process
// (its step lease abandoned) is not shown waiting or thinking.
func TestACardSaysAnAgentsStepDied(t *testing.T) {
	m := model(t, "", nil)
	at := t0.Add(5 * time.Second)
	got, _ := m.state(coordination.AgentStatus{ID: "agent_a", Status: coordination.StatusInterrupted, LastAlive: &at}, Stream{}, true, t0.Add(time.Minute))
	if want := "step died, last alive " + at.Local().Format(time.TimeOnly); got != want {
		t.Errorf("card of an agent whose step died = %q, want %q", got, want)
	}
}

// answering is a source with one pending ask that records its answer.
type answering struct {
	fixed
	got chan bool
}

func (a answering) Answer(id string, approve bool) error {
	a.got <- approve
	return nil
}

// TestThePendingAskIsShownAndAnsweredWithAKey: the live view shows an
// agent's ask for approval and y answers it.
func TestThePendingAskIsShownAndAnsweredWithAKey(t *testing.T) {
	snap := snapshot("")
	snap.Pending = []permissions.ApprovalRequest{{ID: "abc", Agent: "agent_a", Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal, Rule: "role workspace"}}
	src := answering{fixed{snap}, make(chan bool, 1)}
	m := NewModel(Options{Source: src})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
	m.Update(snapMsg{snap: snap, gen: 0})
	if v := m.View(); !strings.Contains(v, "agent_a asks to net(example.com)") || !strings.Contains(v, "y approve") {
		t.Fatalf("the view does not show the ask:\n%s", v)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd == nil {
		t.Fatal("y did nothing")
	}
	cmd()
	if approve := <-src.got; !approve {
		t.Fatal("y refused the ask")
	}
}

// answered is a source that records which ask was answered, and how.
type answered struct {
	fixed
	got chan string
}

func (a answered) Answer(id string, approve bool) error {
	a.got <- fmt.Sprintf("%s %v", id, approve)
	return nil
}

// TestAnyPendingAskCanBePickedAndAnswered: with several asks waiting, ↑↓
// or a number picks one, the view marks it, and y or n answers that one.
func TestAnyPendingAskCanBePickedAndAnswered(t *testing.T) {
	snap := snapshot("")
	for _, id := range []string{"aaa", "bbb", "ccc"} {
		snap.Pending = append(snap.Pending, permissions.ApprovalRequest{ID: id, Agent: "agent_" + id[:1], Action: permissions.Action{Kind: permissions.Net, Target: id + ".example"}, Risk: permissions.RiskExternal, Rule: "role workspace"})
	}
	src := answered{fixed{snap}, make(chan string, 1)}
	m := NewModel(Options{Source: src})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(snapMsg{snap: snap, gen: 0})
	press := func(key tea.KeyMsg) tea.Cmd {
		_, cmd := m.Update(key)
		return cmd
	}
	runes := func(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
	answer := func(key string, want string) {
		t.Helper()
		cmd := press(runes(key))
		if cmd == nil {
			t.Fatalf("%s did nothing", key)
		}
		cmd()
		if got := <-src.got; got != want {
			t.Fatalf("%s answered %q, want %q", key, got, want)
		}
	}
	picked := func(want string) {
		t.Helper()
		for _, line := range strings.Split(m.View(), "\n") {
			if strings.Contains(line, "▸") {
				if !strings.Contains(line, want) || !strings.Contains(line, "y approve") {
					t.Fatalf("the picked ask reads %q, want %s", line, want)
				}
				return
			}
		}
		t.Fatalf("no ask is marked picked:\n%s", m.View())
	}
	picked("aaa.example")
	press(tea.KeyMsg{Type: tea.KeyDown})
	picked("bbb.example")
	answer("n", "bbb false")
	// Two left, aaa and ccc; the pick falls back to the first.
	picked("aaa.example")
	press(runes("2"))
	picked("ccc.example")
	press(tea.KeyMsg{Type: tea.KeyDown}) // past the last: stays
	picked("ccc.example")
	answer("y", "ccc true")
	press(tea.KeyMsg{Type: tea.KeyUp})
	picked("aaa.example")
	answer("y", "aaa true")
	if cmd := press(runes("y")); cmd != nil {
		t.Error("y with no ask left answered something")
	}
}

// expiring is a source whose one ask has expired by the time it is
// answered.
type expiring struct{ fixed }

func (expiring) Answer(id string, approve bool) error {
	return fmt.Errorf("approval request %s: %w", id, permissions.ErrExpired)
}

// TestAnAskThatExpiredBeforeItsAnswerSaysSo: y on an ask that expired
// meanwhile (its step no longer waits) tells the person that ask was not
// answered and why, not that the session could not be read.
func TestAnAskThatExpiredBeforeItsAnswerSaysSo(t *testing.T) {
	snap := snapshot("")
	snap.Pending = []permissions.ApprovalRequest{{ID: "abc", Agent: "agent_a", Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal, Rule: "role workspace"}}
	m := NewModel(Options{Source: expiring{fixed{snap}}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(snapMsg{snap: snap, gen: 0})
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd == nil {
		t.Fatal("y did nothing")
	}
	m.Update(cmd())
	v := m.View()
	if !strings.Contains(v, "ask abc was not answered: approval request abc: the ask was refused at its timeout") || !strings.Contains(v, "no longer waits") || strings.Contains(v, "could not read the session") {
		t.Errorf("the view after y on an expired ask:\n%s", v)
	}
}
