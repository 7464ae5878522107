package mcp

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestCancelTeamLeavesTheSessionCancelledAndResumable: cancelling a stepped
// team answers with the team result as it stands and says how to resume;
// cancelling it again is the same answer (the tool is idempotent), and an
// unknown session is not found.
func TestCancelTeamLeavesTheSessionCancelledAndResumable(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"What is 2+2?","models":["sim","sim"]}`), &started)
	for range 2 {
		res := callTool(t, c, "cancel_team", mustJSON(map[string]string{"session_id": started.SessionID}))
		var out coordination.TeamResult
		decode(t, res, &out)
		if out.Status != coordination.StatusCancelled || out.SessionID != started.SessionID {
			t.Errorf("cancel_team: status %s session %s", out.Status, out.SessionID)
		}
		if !strings.Contains(text(res), "run_team{session_id:") {
			t.Errorf("cancel_team's text does not say how to resume:\n%s", text(res))
		}
	}
	wantError(t, callTool(t, c, "cancel_team", `{"session_id":"team_nowhere"}`), "session_not_found")
}

// TestCancelTeamSchemaSnapshot pins cancel_team's definition (testdata/toolsnaps/cancel_team.json).
func TestCancelTeamSchemaSnapshot(t *testing.T) { checkToolSnap(t, "cancel_team") }
