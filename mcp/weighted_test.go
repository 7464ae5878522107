package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A client may choose consensus weighted and gets the server's weights,
// estimated from this store's past short-answer sessions of the same
// models; run_team's and team_status's text say each weight and why. A
// client's own weights are refused as operator-only; a team file's are
// taken with their reasons.
func TestWeightedOverMCPWeighsByTheServersHistoryNotTheClients(t *testing.T) {
	dir := teamsDir(t, map[string]string{"judged.yaml": `agents:
  - {id: agent_a, model: "sim:accuracy=1:revise=0:seed=1"}
  - {id: agent_b, model: "sim:accuracy=1:revise=0:seed=2"}
rules:
  consensus: weighted
  answer_format: short
  max_rounds: 1
  weights:
    - {agent_id: agent_a, weight: 2.5, reason: "the operator trusts it on arithmetic"}
`})
	c := inProcess(t, newMemServer(t, Options{TeamsDir: dir}), false)
	models := []string{"sim:accuracy=1:revise=0:seed=1", "sim:accuracy=1:revise=0:seed=2", "sim:accuracy=0:revise=0:seed=3"}
	for i := range 8 {
		var past coordination.TeamResult
		decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"task": fmt.Sprintf("What is %d * 7?", 11+i), "models": models,
			"answer_format": "short", "max_rounds": 1, "wait": true})), &past)
		if past.Status != coordination.StatusFinished {
			t.Fatalf("past session %d: %s", i, past.Status)
		}
	}

	ask := map[string]any{"task": "What is 17 * 23?", "models": models, "consensus": "weighted", "answer_format": "short", "max_rounds": 1, "wait": true}
	res := callTool(t, c, "run_team", mustJSON(ask))
	var out coordination.TeamResult
	decode(t, res, &out)
	w := out.Consensus.Weights
	if len(w) != 3 || !(w[0].Weight > w[2].Weight) || !strings.Contains(w[2].Reason, "of 8 past short-answer sessions") {
		t.Fatalf("the always-wrong agent weighs least, by the store's 8 sessions: %+v", w)
	}
	for _, where := range []string{text(res), text(callTool(t, c, "team_status", `{"session_id":"`+out.SessionID+`"}`))} {
		if !strings.Contains(where, "Weights (consensus weighted") || !strings.Contains(where, "agent_c (sim:accuracy=0:revise=0:seed=3)'s vote counts 0.05") ||
			!strings.Contains(where, "weighted vote: 391 has weight") {
			t.Errorf("the text does not say how each vote counted:\n%s", where)
		}
	}

	ask["weights"] = []any{map[string]any{"agent_id": "agent_c", "weight": 100}}
	wantError(t, callTool(t, c, "run_team", mustJSON(ask)), "operator_only", "sets weights", "outvote")
	wantError(t, callTool(t, c, "start_team", mustJSON(ask)), "operator_only", "sets weights")

	var team coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"team":"judged","task":"What is 6 * 7?","wait":true}`), &team)
	if w := team.Consensus.Weights; len(w) != 2 || w[0].Weight != 2.5 || w[0].Reason != "the operator trusts it on arithmetic" {
		t.Fatalf("a team file's weights are the session's: %+v", w)
	}
}
