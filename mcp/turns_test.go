package mcp

import (
	"strings"
	"testing"
)

// TestRunTeamContinueFromChainsThreeTurns: run_team{continue_from, task}
// starts the next turn of a finished session — the same team, the previous
// answer in its history, the winner's files as every workspace's start — and
// team_status names the turn and the session it continues.
func TestRunTeamContinueFromChainsThreeTurns(t *testing.T) {
	c := inProcess(t, newFileServer(t, Options{}), false)
	var first TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"Build a one-page landing site for a bakery","models":["sim","sim","sim"],"session_id":"turn1","wait":true}`), &first)
	if first.Status != "finished" || first.FilesCount == 0 {
		t.Fatalf("turn 1: %s, %d files; want finished with files", first.Status, first.FilesCount)
	}
	prev := first.SessionID
	for i, task := range []string{"now add dark mode", "and a contact form"} {
		var res TeamResult
		decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"continue_from": prev, "task": task, "wait": true})), &res)
		if res.Status != "finished" || res.SessionID == prev {
			t.Fatalf("turn %d: %s %s; want a new finished session", i+2, res.SessionID, res.Status)
		}
		if len(res.Agents) != 3 {
			t.Errorf("turn %d has %d agents; the previous turn's team of 3 goes on", i+2, len(res.Agents))
		}
		// The winner's files carry on: the sim's site is in every turn.
		if res.FilesCount < first.FilesCount {
			t.Errorf("turn %d delivers %d files, fewer than the %d it started from", i+2, res.FilesCount, first.FilesCount)
		}
		var st StatusView
		decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": res.SessionID})), &st)
		if st.Turn != i+2 || st.Previous != prev {
			t.Errorf("team_status of turn %d: turn %d previous %q; want %d and %q", i+2, st.Turn, st.Previous, i+2, prev)
		}
		prev = res.SessionID
	}
	var st StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"turn1"}`), &st)
	if st.Turn != 0 || st.Previous != "" {
		t.Errorf("a first turn shows turn %d previous %q; want neither", st.Turn, st.Previous)
	}
}

// TestContinueFromRefusesWhatCannotBeContinued: a session that does not
// exist is not found, naming it, and nothing is created; a session still
// running has no next turn yet.
func TestContinueFromRefusesWhatCannotBeContinued(t *testing.T) {
	c := inProcess(t, newFileServer(t, Options{}), false)
	wantError(t, callTool(t, c, "run_team", `{"continue_from":"gone_session","task":"more"}`), "session_not_found", "gone_session", "nothing was created")
	var started map[string]any
	decode(t, callTool(t, c, "start_team", `{"task":"What is 17 * 23?","models":["sim","host"],"session_id":"open"}`), &started)
	res := callTool(t, c, "run_team", `{"continue_from":"open","task":"more"}`)
	wantError(t, res, "", "no final answer", "open")
	if strings.Contains(text(res), "/tmp/") {
		t.Errorf("the refusal shows a server path: %s", text(res))
	}
}

// TestRunTeamResumingATurnThatContinuesAnotherIsRefused: run_team's
// continue_from, given with the session_id of a stored session, names the
// turn that session must follow up (coordination.RunRequest.Previous): a
// session that follows up another turn, or none, is another session under
// the id and is refused (session_exists), never resumed as if it were the
// turn asked for. The same continue_from resumes it.
func TestRunTeamResumingATurnThatContinuesAnotherIsRefused(t *testing.T) {
	c := inProcess(t, newFileServer(t, Options{}), false)
	for _, id := range []string{"first", "other"} {
		var res TeamResult
		decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim", "sim"}, "session_id": id, "wait": true})), &res)
		if res.Status != "finished" {
			t.Fatalf("turn %s: %s; want finished", id, res.Status)
		}
	}
	var next TeamResult
	decode(t, callTool(t, c, "run_team", `{"continue_from":"first","task":"And 17 * 24?","session_id":"second","wait":true}`), &next)
	if next.Status != "finished" || next.SessionID != "second" {
		t.Fatalf("the next turn: %s %s; want second finished", next.SessionID, next.Status)
	}
	var again TeamResult
	decode(t, callTool(t, c, "run_team", `{"session_id":"second","continue_from":"first"}`), &again)
	if again.SessionID != "second" || again.Status != "finished" {
		t.Errorf("resuming second, which continues first: %s %s; want second finished", again.SessionID, again.Status)
	}
	wantError(t, callTool(t, c, "run_team", `{"session_id":"second","continue_from":"other"}`), "session_exists", "second", "follows up first", "other")
	wantError(t, callTool(t, c, "run_team", `{"session_id":"first","continue_from":"other"}`), "session_exists", "first", "follows up no session")
}
