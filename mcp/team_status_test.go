package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func TestTeamStatusFormats(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 2 + 2?", "models": []string{"sim", "sim"}})), &started)

	md := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID}))
	var v coordination.StatusView
	decode(t, md, &v)
	if !strings.HasPrefix(text(md), "## Team "+started.SessionID) || len(v.Agents) != 2 || v.Timeline == nil {
		t.Errorf("markdown status: %s / %+v", text(md), v)
	}
	// The same pictures as the CLI's status, from the one renderer; the
	// swimlane, which grows with the run, only with detail full.
	for _, want := range []string{"**Vote graph**", "no answers yet", "majority: 2 of 2 votes needed"} {
		if !strings.Contains(text(md), want) {
			t.Errorf("markdown status lacks %q:\n%s", want, text(md))
		}
	}
	full := text(callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID, "detail": "full"})))
	for _, want := range []string{"**Vote graph**", "**Timeline by agent**", "no steps yet", "since:"} {
		if !strings.Contains(full, want) {
			t.Errorf("detail full status lacks %q:\n%s", want, full)
		}
	}
	js := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID, "format": "json"}))
	var fromText coordination.StatusView
	if err := json.Unmarshal([]byte(text(js)), &fromText); err != nil || fromText.Result.SessionID != started.SessionID {
		t.Errorf("format json: the text is not the status JSON (%v): %s", err, text(js))
	}
}

// TestTeamStatusSchemaSnapshot pins team_status's definition (testdata/toolsnaps/team_status.json).
func TestTeamStatusSchemaSnapshot(t *testing.T) { checkToolSnap(t, "team_status") }
