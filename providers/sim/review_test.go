package sim

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

type reviewArgs struct {
	Content  string     `json:"content"`
	Verdict  string     `json:"verdict"`
	Concerns []string   `json:"concerns"`
	Plan     []planStep `json:"plan"`
}

func reviewStep(t *testing.T, p providers.Provider, req providers.Request) (providers.ToolCall, reviewArgs) {
	t.Helper()
	act, _, err := p.Step(context.Background(), req)
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("want one call: %v %+v", err, act)
	}
	var args reviewArgs
	if act.Calls[0].Name == providers.ToolNewAnswer {
		if err := json.Unmarshal(act.Calls[0].Args, &args); err != nil {
			t.Fatal(err)
		}
	}
	return act.Calls[0], args
}

func reviewRequest(objective string) providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep, Task: "Checkpoint review: " + objective, AgentID: "agent_a", Self: "agent2",
		SessionSeed: 1, StepNumber: 1, Tools: tools(true, false), Review: &providers.ReviewBrief{Objective: objective},
	}
}

func TestSimReviewerIsDeterministicAndFollowsRisk(t *testing.T) {
	p := mustSim(t, "sim")
	for objective, verdict := range map[string]string{
		"Update the copyright year in my local LICENSE file.":           "proceed",
		"Permanently delete the customer records in the production DB.": "revise",
		"Bypass the deploy approval and push straight to production.":   "refuse",
		"Refund the customer $40 for order 1234.":                       "proceed",
		"Refund the customer for order 1234.":                           "revise",
	} {
		call, args := reviewStep(t, p, reviewRequest(objective))
		if args.Verdict != verdict || call.Name != providers.ToolNewAnswer {
			t.Errorf("%q: verdict %q, want %q (concerns %q)", objective, args.Verdict, verdict, args.Concerns)
		}
		if verdict != "proceed" && len(args.Concerns) == 0 {
			t.Errorf("%q: a %s verdict needs concerns", objective, verdict)
		}
		_, again := reviewStep(t, p, reviewRequest(objective))
		if !reflect.DeepEqual(args, again) {
			t.Errorf("%q: the same request gave another review", objective)
		}
	}
}

func TestSimReviewerVotesForTheLowestReviewSharingItsVerdict(t *testing.T) {
	req := reviewRequest("Drop the sessions table in production.")
	req.StepNumber, req.Tools, req.VoteEnum = 2, tools(true, true), []string{"agent1", "agent2", "agent3"}
	req.Shown = []providers.ShownAnswer{
		{Alias: "agent3", Label: "agent3.1", Content: "x\n\nVerdict: revise\n"},
		{Alias: "agent1", Label: "agent1.1", Content: "y\n\nVerdict: proceed\n"},
		{Alias: "agent2", Label: "agent2.1", Content: "z\n\nVerdict: revise\n"},
	}
	call, _ := reviewStep(t, mustSim(t, "sim"), req)
	var v struct {
		AgentID string `json:"agent_id"`
	}
	json.Unmarshal(call.Args, &v)
	if call.Name != providers.ToolVote || v.AgentID != "agent2" {
		t.Fatalf("want a vote for agent2 (the lowest revise), got %s %s", call.Name, call.Args)
	}
}

func TestSimReviewerRepairsADraftAndAddsTheMissingBackup(t *testing.T) {
	draft := `[{"step":1,"kind":"check","description":"See who reads it.","preconditions":[3],"touches":["database"],"recovery":["stop"]},
	{"step":2,"kind":"action","description":"Drop the table.","preconditions":[1],"touches":["prod","shared_db"],"recovery":["halt"],"approved_call":{"tool":"psql","arguments":{"q":"DROP TABLE t"}}},
	{"step":3,"kind":"notify","description":"Tell the team.","preconditions":[2],"touches":[],"recovery":["proceed"]}]`
	req := reviewRequest("Drop table t in production.")
	req.Review.DraftPlan = json.RawMessage(draft)
	req.Review.DraftProblems = []string{"step 1 has precondition 3, a later step"}
	_, args := reviewStep(t, mustSim(t, "sim"), req)
	if args.Verdict != "revise" || len(args.Plan) != 4 {
		t.Fatalf("verdict %s, %d steps: %+v", args.Verdict, len(args.Plan), args.Plan)
	}
	want := []string{"verify", "backup", "action", "notify"}
	for i, st := range args.Plan {
		if st.Step != i+1 || st.Kind != want[i] {
			t.Errorf("step %d: %+v", i+1, st)
		}
		for _, pre := range st.Preconditions {
			if pre >= st.Step {
				t.Errorf("step %d keeps a precondition on step %d", st.Step, pre)
			}
		}
	}
	if got := args.Plan[0].Touches; len(got) != 1 || got[0] != "other:database" || args.Plan[0].Recovery[len(args.Plan[0].Recovery)-1] != "halt" {
		t.Errorf("an unknown tag and a recovery without outcome are repaired: %+v", args.Plan[0])
	}
	act := args.Plan[2]
	if act.Rollback == nil || act.Rollback.Tool != "restore_backup" || act.Rollback.Arguments["from_step"] != float64(2) || !containsInt(act.Preconditions, 2) {
		t.Errorf("the action depends on and rolls back from the new backup: %+v", act)
	}
	if c := strings.Join(args.Concerns, "\n"); !strings.Contains(c, "a later step") || !strings.Contains(c, "no backup step before it") {
		t.Errorf("concerns %q", args.Concerns)
	}
}

func TestSimReviewerFallsBackToItsOwnPlanWhenRefused(t *testing.T) {
	req := reviewRequest("Rotate the staging API key.")
	req.Attempt = 1
	req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{{Name: providers.ToolNewAnswer, Args: json.RawMessage(`{}`)}}},
		Problem: "Your review was refused: step 2 is an action without a rollback"}}
	_, args := reviewStep(t, mustSim(t, "sim"), req)
	if len(args.Plan) == 0 || !strings.Contains(args.Content, "rewritten") {
		t.Fatalf("want a fresh plan: %+v", args)
	}
}

func TestCallerRuleHits(t *testing.T) {
	words := map[string]bool{"drop": true, "the": true, "staging": true, "tables": true}
	for rule, want := range map[string]bool{
		"Never drop tables.":          true,
		"Do not drop staging tables.": true,
		"no staging":                  true,
		"Never touch billing.":        false,
		"Tables are precious.":        false, // not a prohibition
	} {
		if got := hitsRule(rule, words); got != want {
			t.Errorf("%q: %v, want %v", rule, got, want)
		}
	}
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}
