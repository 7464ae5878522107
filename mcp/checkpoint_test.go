package mcp

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

func TestCheckpointToolReturnsVerdictPlanAndConcerns(t *testing.T) {
	c := inProcess(t, newFileServer(t, Options{}), false)
	res := callTool(t, c, "checkpoint", mustJSON(map[string]any{
		"objective":     "Drop the legacy_orders table from the production database.",
		"models":        []string{"sim/strong", "sim", "sim"},
		"safety_policy": []string{"Tell the data team before any schema change."},
		"action_goals":  []map[string]any{{"goal": "drop legacy_orders", "preferred_tools": []string{"psql"}}},
	}))
	var cr checkpoint.Result
	decode(t, res, &cr)
	if cr.Verdict == nil || *cr.Verdict != checkpoint.VerdictRevise || cr.Status != coordination.StatusFinished {
		t.Fatalf("an irreversible production change without a backup is revised: %s", text(res))
	}
	if len(cr.Plan) == 0 || len(cr.Concerns) != 3 || len(cr.Votes) != 3 || cr.Winner == nil || cr.SessionDir == "" {
		t.Fatalf("result lacks plan, concerns, votes, winner or session_dir: %+v", cr)
	}
	var action *checkpoint.PlanStep
	for i := range cr.Plan {
		if cr.Plan[i].Kind == checkpoint.StepAction {
			action = &cr.Plan[i]
		}
	}
	if action == nil || action.GoalID != "G1" || action.ApprovedCall.Tool != "psql" || action.Rollback == nil {
		t.Fatalf("the action step carries the goal's approved call and a rollback: %+v", action)
	}
	for _, want := range []string{"verdict revise", "Do not carry it out yet", "Concerns of", "Winning review"} {
		if !strings.Contains(text(res), want) {
			t.Errorf("text lacks %q:\n%s", want, text(res))
		}
	}
	// The review is an ordinary session: team_status reads it, and
	// checkpoint{session_id} reads the verdict again.
	st := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": cr.SessionID}))
	if st.IsError || !strings.Contains(text(st), "Verdict: revise") {
		t.Fatalf("team_status on a checkpoint session: %s", text(st))
	}
	again := callTool(t, c, "checkpoint", mustJSON(map[string]any{"session_id": cr.SessionID}))
	var cr2 checkpoint.Result
	decode(t, again, &cr2)
	if cr2.Verdict == nil || *cr2.Verdict != *cr.Verdict || len(cr2.Plan) != len(cr.Plan) {
		t.Fatalf("checkpoint{session_id} returns the same verdict: %s", text(again))
	}
}

func TestCheckpointToolVerifiesADraft(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	draft := []map[string]any{
		{"step": 1, "kind": "verify", "description": "Check the window is open.", "preconditions": []int{2}, "touches": []string{"prod"}, "recovery": []string{"halt"}},
		{"step": 2, "kind": "action", "description": "Restart the API pods.", "preconditions": []int{1}, "touches": []string{"prod", "infra"}, "recovery": []string{"halt"},
			"approved_call":        map[string]any{"tool": "kubectl", "arguments": map[string]any{"args": "rollout restart deploy/api"}},
			"rollback_none_reason": "a restart has no undo; pods come back on their own"},
	}
	res := callTool(t, c, "checkpoint", mustJSON(map[string]any{
		"objective": "Restart the API pods in production.", "draft_plan": draft, "models": []string{"sim", "sim"},
	}))
	var cr checkpoint.Result
	decode(t, res, &cr)
	if cr.Verdict == nil || *cr.Verdict != checkpoint.VerdictRevise {
		t.Fatalf("a draft with a forward precondition is revised: %s", text(res))
	}
	if probs := checkpoint.ValidatePlan(cr.Plan, nil); probs != nil {
		t.Fatalf("the corrected plan still breaks the schema: %q", probs)
	}
	if !strings.Contains(strings.Join(cr.Concerns[0].Concerns, "\n"), "step 1 has precondition 2, a later step") {
		t.Fatalf("the concerns name the draft's problem: %+v", cr.Concerns)
	}
}

func TestCheckpointToolRefusesBadInput(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	wantError(t, callTool(t, c, "checkpoint", `{"models":["sim"]}`), "bad_input", "objective is empty")
	wantError(t, callTool(t, c, "checkpoint", `{"objective":"x","draft_plan":[{"step":"one"}]}`), "bad_arguments", "draft_plan")
	wantError(t, callTool(t, c, "checkpoint", `{"objective":"x","models":["sim"],"action_goals":[{"id":"a b","goal":"y"}]}`), "bad_input", `action goal id "a b"`)
}

// TestCheckpointSchemaSnapshot pins checkpoint's definition (testdata/toolsnaps/checkpoint.json).
func TestCheckpointSchemaSnapshot(t *testing.T) { checkToolSnap(t, "checkpoint") }
