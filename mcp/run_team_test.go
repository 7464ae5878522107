package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func TestRunTeamWithWaitRunsToTheEnd(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true,
	}))
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished || tr.Winner == nil || tr.FinalAnswer == nil {
		t.Fatalf("want a finished result with a winner, got %s", text(res))
	}
	if tr.Votes == nil || tr.Answers == nil || tr.NextAgents == nil || tr.Agents == nil {
		t.Errorf("result slices must be arrays, never null: %+v", tr)
	}
	if !strings.Contains(text(res), "Winner: ") || !strings.Contains(text(res), "Final answer:") {
		t.Errorf("text rendering lacks the summary or the final answer:\n%s", text(res))
	}
}

// TestRunTeamEstimateRunsNothing: estimate: true returns the worst case at
// list prices and writes no session; the same team run for real with a
// budget that cannot pay for a round is refused before any spend.
func TestRunTeamEstimateRunsNothing(t *testing.T) {
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	c := inProcess(t, New(svc, Options{ValidateOutput: true}), false)
	m := "sim:price_in=10:price_out=40"
	team := map[string]any{"task": "What is 17 * 23?", "models": []string{m, m, m}, "cost_budget_usd": 0.05, "estimate": true}
	res := callTool(t, c, "run_team", mustJSON(team))
	var tr TeamResult
	decode(t, res, &tr)
	if res.IsError || tr.Status != "estimate" || tr.Estimate == nil || len(tr.Estimate.Agents) != 3 ||
		tr.Estimate.RoundCostUSD < 0.9 || !strings.Contains(tr.Estimate.Problem, "cannot pay for one round of these 3 agents") {
		t.Fatalf("want an estimate with the budget's problem, got %s", text(res))
	}
	if !strings.Contains(text(res), "nothing was run or spent") {
		t.Errorf("the text must say nothing was run:\n%s", text(res))
	}
	if ids, _ := svc.Store().Sessions(context.Background()); len(ids) != 0 {
		t.Fatalf("an estimate wrote sessions: %v", ids)
	}
	delete(team, "estimate")
	wantError(t, callTool(t, c, "run_team", mustJSON(team)), "budget_too_small", "about $0.9")
	if ids, _ := svc.Store().Sessions(context.Background()); len(ids) != 0 {
		t.Fatalf("a refused team wrote sessions: %v", ids)
	}
}

func TestRunTeamWithoutWaitReturnsTheHandleAtOnce(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	start := time.Now()
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim:latency=200ms", "sim:latency=200ms", "sim:latency=200ms"}, "wait": false,
	}))
	var handle coordination.TeamResult
	decode(t, res, &handle)
	if handle.Status != coordination.StatusRunning || handle.SessionID == "" {
		t.Fatalf("want a running handle, got %s", text(res))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("wait:false took %s", d)
	}
	if !strings.Contains(text(res), "team_status") {
		t.Errorf("the handle's text should say how to follow the run:\n%s", text(res))
	}
	// A second run_team for the running session waits on the same run.
	res = callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": handle.SessionID, "wait": true}))
	var final coordination.TeamResult
	decode(t, res, &final)
	if final.Status != coordination.StatusFinished || final.SessionID != handle.SessionID {
		t.Fatalf("want the same session finished, got %s", text(res))
	}
}

func TestRunTeamHandsBackTheHandleAfterTheWaitLimit(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: 150 * time.Millisecond}), false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim:latency=300ms", "sim:latency=300ms", "sim:latency=300ms"},
	}))
	var handle coordination.TeamResult
	decode(t, res, &handle)
	if handle.Status != coordination.StatusRunning {
		t.Fatalf("want running after the wait limit, got %s", text(res))
	}
	// The run goes on after the handle is handed back.
	res = callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": handle.SessionID, "wait": true}))
	var final coordination.TeamResult
	decode(t, res, &final)
	if final.Status != coordination.StatusFinished {
		t.Fatalf("want finished, got %s", text(res))
	}
}

func TestCancelledSessionResumesWithRunTeam(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var handle coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 6 * 7?", "models": []string{"sim:latency=300ms", "sim:latency=300ms"}, "wait": false,
	})), &handle)
	var cancelled coordination.TeamResult
	decode(t, callTool(t, c, "cancel_team", mustJSON(map[string]any{"session_id": handle.SessionID})), &cancelled)
	if cancelled.Status != coordination.StatusCancelled {
		t.Fatalf("cancel_team: want cancelled, got %s", cancelled.Status)
	}
	var resumed coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": handle.SessionID, "wait": true})), &resumed)
	if resumed.Status != coordination.StatusFinished {
		t.Fatalf("resume: want finished, got %s", resumed.Status)
	}
}

func TestRunTeamCancelledWhileBlockingCancelsTheRun(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var req mcpgo.CallToolRequest
		req.Params.Name = "run_team"
		req.Params.Arguments = map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=2s", "sim:latency=2s"}, "session_id": "blocking_run", "wait": true}
		_, _ = c.CallTool(ctx, req)
	}()
	waitFor(t, func() bool { _, ok := s.Service().Running("blocking_run"); return ok })
	cancel()
	<-done
	waitFor(t, func() bool {
		res, err := s.Service().Result(context.Background(), "blocking_run")
		return err == nil && res.Status == coordination.StatusCancelled
	})
}

// Concurrent identical run_team calls with one client-chosen session_id all
// join the one run; a different team under that id is refused.
func TestIdenticalRunTeamCallsJoinOneRun(t *testing.T) {
	c := inProcess(t, newFileServer(t, Options{}), false)
	args := mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim:latency=50ms", "sim:latency=50ms", "sim:latency=50ms"}, "session_id": "team_joined", "wait": true})
	results := make(chan *mcpgo.CallToolResult, 6)
	for range 6 {
		go func() { results <- callTool(t, c, "run_team", args) }()
	}
	for range 6 {
		res := <-results
		if res.IsError {
			t.Fatalf("an identical run_team failed: %s", text(res))
		}
		var tr struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		}
		decode(t, res, &tr)
		if tr.SessionID != "team_joined" || tr.Status != "finished" {
			t.Errorf("joined call = %+v; want the one finished session", tr)
		}
	}
	other := mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim", "sim"}, "session_id": "team_joined"})
	wantError(t, callTool(t, c, "run_team", other), "session_exists", "team_joined", "team")
}

// TestRunTeamSchemaSnapshot pins run_team's definition (testdata/toolsnaps/run_team.json).
func TestRunTeamSchemaSnapshot(t *testing.T) { checkToolSnap(t, "run_team") }

// TestRunTeamWithoutWaitResumingACancelledSessionSaysRunning: run_team
// {session_id, wait: false} on a cancelled session resumes it, and its
// reply says running, in its structured status and its text. The resume
// was recorded by the run's loop after Start had returned, so the reply,
// read at once, said the session was still cancelled and named, as the way
// to resume it, the very call just made; a second later it read running.
func TestRunTeamWithoutWaitResumingACancelledSessionSaysRunning(t *testing.T) {
	stores := map[string]func(t *testing.T) *Server{
		"memory": func(t *testing.T) *Server { return newMemServer(t, Options{}) },
		"files":  func(t *testing.T) *Server { return newFileServer(t, Options{}) },
		"postgres": func(t *testing.T) *Server {
			return pgServers(t, 1)[0]
		},
	}
	for name, server := range stores {
		t.Run(name, func(t *testing.T) {
			s := server(t)
			c := inProcess(t, s, false)
			const id = "walk9"
			decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{
				"task": "What is 6 * 7?", "models": []string{"sim:latency=300ms", "sim:latency=300ms"}, "session_id": id, "wait": false,
			})), &coordination.TeamResult{})
			// Cancelled and resumed a few times: each resume's reply must
			// read running.
			for round := range 3 {
				var cancelled coordination.TeamResult
				decode(t, callTool(t, c, "cancel_team", mustJSON(map[string]any{"session_id": id})), &cancelled)
				if cancelled.Status != coordination.StatusCancelled {
					t.Fatalf("round %d: cancel_team: want cancelled, got %s", round, cancelled.Status)
				}
				waitFor(t, func() bool { _, on := s.Service().Running(id); return !on })
				res := callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": id, "wait": false}))
				var resumed coordination.TeamResult
				decode(t, res, &resumed)
				if resumed.Status != coordination.StatusRunning || resumed.CancelReason != "" {
					t.Errorf("round %d: run_team{wait: false} resumed the session but its reply says %s (%q):\n%s", round, resumed.Status, resumed.CancelReason, text(res))
				}
				if txt := text(res); !strings.HasPrefix(txt, "Team "+id+": running") || strings.Contains(txt, "cancelled") {
					t.Errorf("round %d: the reply's text does not say running:\n%s", round, txt)
				}
			}
			var final coordination.TeamResult
			decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": id, "wait": true})), &final)
			if final.Status != coordination.StatusFinished {
				t.Fatalf("want the resumed session finished, got %s", final.Status)
			}
		})
	}
}
