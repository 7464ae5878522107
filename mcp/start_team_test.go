package mcp

import (
	"testing"
)

func TestStartTeamThenStepToTheEnd(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"},
	})), &started)
	if len(started.Agents) != 3 || started.Agents[0].Backend != "sim" || len(started.NextAgents) != 3 || started.Rules.Consensus != "majority" {
		t.Fatalf("start_team result: %+v", started)
	}
	finished := driveToEnd(t, c, started.SessionID, nil)
	if finished.Result == nil || finished.Result.Winner == nil {
		t.Fatalf("the finishing step carries no result with a winner: %+v", finished)
	}
}

// TestStartTeamSchemaSnapshot pins start_team's definition (testdata/toolsnaps/start_team.json).
func TestStartTeamSchemaSnapshot(t *testing.T) { checkToolSnap(t, "start_team") }
