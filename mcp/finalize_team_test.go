package mcp

import (
	"context"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func TestFinalizeTeamForcesAWinner(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim", "sim", "sim"}})), &started)
	for _, a := range started.NextAgents {
		callTool(t, c, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": a}))
	}
	var res coordination.TeamResult
	decode(t, callTool(t, c, "finalize_team", mustJSON(map[string]any{"session_id": started.SessionID, "final": "winner"})), &res)
	if res.Status != coordination.StatusFinished || res.Winner == nil || res.StopReason == nil || *res.StopReason != coordination.StopFinalized {
		t.Fatalf("want finished by finalize, got %+v", res)
	}
}

// TestFinalizeTeamAskedAgainOnAnotherServerReturnsTheResult: finalize_team
// asked again on another server of the same store (a retry a load
// balancer sent elsewhere, the first answer lost) returns the same result,
// not session_finished.
func TestFinalizeTeamAskedAgainOnAnotherServerReturnsTheResult(t *testing.T) {
	_, c1, c2 := twoServers(t, Options{})
	var started startTeamResult
	decode(t, callTool(t, c1, "start_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim", "sim", "sim"}})), &started)
	for _, a := range started.NextAgents {
		callTool(t, c1, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": a}))
	}
	args := mustJSON(map[string]any{"session_id": started.SessionID})
	var first, again coordination.TeamResult
	decode(t, callTool(t, c1, "finalize_team", args), &first)
	decode(t, callTool(t, c2, "finalize_team", args), &again)
	if first.Status != coordination.StatusFinished || again.Status != first.Status || again.Winner == nil || first.Winner == nil || again.Winner.Label != first.Winner.Label {
		t.Fatalf("finalize_team again on another server: %+v; want the first's %+v", again, first)
	}
}

// TestFinalizeWhileRunTeamBlocks: finalize_team from another request ends a
// run that a run_team call is waiting on; both return results, not errors.
func TestFinalizeWhileRunTeamBlocks(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	blocked := make(chan *mcpgo.CallToolResult, 1)
	go func() {
		blocked <- callTool(t, c, "run_team", `{"task":"What is 6 * 7?","models":["sim:latency=300ms","sim:latency=300ms","sim:latency=300ms"],"session_id":"fin","wait":true}`)
	}()
	waitFor(t, func() bool {
		res, err := s.Service().Result(context.Background(), "fin")
		return err == nil && res.Steps >= 3
	})
	var fin coordination.TeamResult
	decode(t, callTool(t, c, "finalize_team", `{"session_id":"fin"}`), &fin)
	if fin.Status != coordination.StatusFinished {
		t.Fatalf("finalize_team: %+v", fin)
	}
	var waited coordination.TeamResult
	decode(t, <-blocked, &waited)
	if waited.SessionID != "fin" {
		t.Fatalf("run_team: %+v", waited)
	}
}

// TestFinalizeTeamSchemaSnapshot pins finalize_team's definition (testdata/toolsnaps/finalize_team.json).
func TestFinalizeTeamSchemaSnapshot(t *testing.T) { checkToolSnap(t, "finalize_team") }
