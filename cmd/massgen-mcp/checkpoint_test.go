package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

func TestCheckpointPrintsVerdictPlanAndConcerns(t *testing.T) {
	dir := t.TempDir()
	out, code := cli(t, "checkpoint", "--state-dir", dir, "--models", "sim/strong,sim,sim", "--seed", "1", "Drop the legacy_orders table from the production database")
	if code != 0 {
		t.Fatalf("a reached verdict exits 0, got %d:\n%s", code, out)
	}
	for _, want := range []string{"Verdict: revise", "Plan:", "[backup]", "approved call: run", "rollback: restore_backup", "Concerns of agent", "names no backup", "Session: team_"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckpointJSONWithDraftGoalsAndPolicy(t *testing.T) {
	dir := t.TempDir()
	draft := filepath.Join(dir, "plan.json")
	os.WriteFile(draft, []byte(`[
  {"step": 1, "kind": "verify", "description": "Check the recipients list.", "preconditions": [], "touches": ["external_recipients"], "recovery": ["halt"]},
  {"step": 2, "kind": "action", "description": "Send the newsletter.", "preconditions": [1], "touches": ["external_recipients"], "recovery": ["halt"], "goal_id": "send",
   "approved_call": {"tool": "mailer.send", "arguments": {"list": "subscribers"}}, "rollback_none_reason": "a sent email cannot be recalled"}
]`), 0o644)
	goals := filepath.Join(dir, "goals.json")
	os.WriteFile(goals, []byte(`[{"id": "send", "goal": "send the March newsletter", "preferred_tools": ["mailer.send"]}]`), 0o644)
	out, code := cli(t, "checkpoint", "--json", "--state-dir", dir, "--models", "sim,sim", "--draft", draft, "--goals", goals,
		"--policy", "Send nothing to unsubscribed addresses.", "Send the March newsletter to our subscribers.")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var res checkpoint.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Verdict == nil || *res.Verdict != "proceed" || len(res.Plan) != 2 || res.Plan[1].GoalID != "send" {
		t.Fatalf("a sound draft is verified as is: %s", out)
	}
	again, code := cli(t, "checkpoint", "--json", "--state-dir", dir, "--resume", res.SessionID)
	if code != 0 || !strings.Contains(again, `"verdict": "proceed"`) {
		t.Fatalf("--resume of a finished checkpoint prints it again: %d %s", code, again)
	}
}

func TestCheckpointBadInputExitsOne(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "plan.json")
	os.WriteFile(bad, []byte(`[{"step": 1, "kind": "verify", "rollbak": {}}]`), 0o644)
	for _, args := range [][]string{
		{"checkpoint", "--state-dir", dir, "--models", "sim"},
		{"checkpoint", "--state-dir", dir, "--models", "sim", "--draft", bad, "x"},
		{"checkpoint", "--state-dir", dir, "--models", "sim", "--draft", filepath.Join(dir, "missing.json"), "x"},
		{"checkpoint", "--state-dir", dir, "--models", "sim", "--policy", " ", "x"},
	} {
		if out, code := cli(t, args...); code != 1 {
			t.Errorf("%v: exit %d, want 1:\n%s", args, code, out)
		}
	}
	if out, _ := cli(t, "checkpoint", "--state-dir", dir, "--models", "sim", "--draft", bad, "x"); !strings.Contains(out, `unknown field "rollbak"`) {
		t.Errorf("a misspelt draft field is named: %s", out)
	}
}
