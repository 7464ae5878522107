package checkpoint_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

// safePlan is a valid plan for dropping a production table: check, back up,
// drop (with its call and rollback), check, tell.
func safePlan() checkpoint.Plan {
	return checkpoint.Plan{
		{Step: 1, Kind: "verify", Description: "Confirm legacy_orders has had no reads for 30 days.", Preconditions: []int{}, Touches: []string{"prod", "shared_db"}, Recovery: []string{"halt"}},
		{Step: 2, Kind: "backup", Description: "Dump legacy_orders and check the dump restores.", Preconditions: []int{1}, Touches: []string{"shared_db"}, Recovery: []string{"halt"},
			ApprovedCall: &checkpoint.PlannedCall{Tool: "pg_dump", Arguments: map[string]any{"table": "legacy_orders"}}},
		{Step: 3, Kind: "action", Description: "Drop legacy_orders.", Preconditions: []int{1, 2}, Touches: []string{"prod", "shared_db"}, Recovery: []string{"restore the dump from step 2", "recheckpoint"},
			ApprovedCall: &checkpoint.PlannedCall{Tool: "sql", Arguments: map[string]any{"query": "DROP TABLE legacy_orders"}},
			Rollback:     &checkpoint.PlannedCall{Tool: "pg_restore", Arguments: map[string]any{"from_step": 2}}},
		{Step: 4, Kind: "verify", Description: "Check the application's health checks pass.", Preconditions: []int{3}, Touches: []string{"prod"}, Recovery: []string{"restore the dump from step 2", "halt"}},
		{Step: 5, Kind: "notify", Description: "Tell the data team the table is gone and where the dump is.", Preconditions: []int{4}, Touches: []string{}, Recovery: []string{"proceed"}},
	}
}

func TestValidPlanHasNoProblems(t *testing.T) {
	if probs := checkpoint.ValidatePlan(safePlan(), nil); probs != nil {
		t.Fatalf("a valid plan was refused: %q", probs)
	}
	withGoal := safePlan()
	withGoal[2].GoalID = "G1"
	withGoal[1].Touches = []string{"other:object_storage"}
	if probs := checkpoint.ValidatePlan(withGoal, []checkpoint.ActionGoal{{ID: "G1", Goal: "drop the table"}}); probs != nil {
		t.Fatalf("goal_id and an other: tag were refused: %q", probs)
	}
}

// TestPlanValidationNamesTheExactProblem pins each rule of the plan schema
// to the sentence a reviewer gets back in its corrective retry.
func TestPlanValidationNamesTheExactProblem(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p checkpoint.Plan) checkpoint.Plan
		goals  []checkpoint.ActionGoal
		want   string
	}{
		{"forward precondition", func(p checkpoint.Plan) checkpoint.Plan { p[1].Preconditions = []int{1, 4}; return p }, nil,
			"step 2 has precondition 4, a later step: a step may depend only on earlier steps (here only step 1)"},
		{"self reference", func(p checkpoint.Plan) checkpoint.Plan { p[2].Preconditions = []int{3}; return p }, nil,
			"step 3 lists itself as a precondition: a step may depend only on earlier steps (here steps 1–2)"},
		{"first step with a precondition", func(p checkpoint.Plan) checkpoint.Plan { p[0].Preconditions = []int{2}; return p }, nil,
			"step 1 has precondition 2, a later step: a step may depend only on earlier steps (step 1 is the first, so none)"},
		{"action without rollback", func(p checkpoint.Plan) checkpoint.Plan { p[2].Rollback = nil; return p }, nil,
			"step 3 is an action without a rollback: give rollback {\"tool\": …, \"arguments\": {…}} that undoes it, or rollback_none_reason saying why nothing can"},
		{"action without approved call", func(p checkpoint.Plan) checkpoint.Plan { p[2].ApprovedCall = nil; return p }, nil,
			"step 3 is an action without an approved_call"},
		{"unknown kind", func(p checkpoint.Plan) checkpoint.Plan { p[0].Kind = "deploy"; return p }, nil,
			`step 1 has kind "deploy": kind must be one of verify, action, backup, notify, wait`},
		{"misnumbered", func(p checkpoint.Plan) checkpoint.Plan { p[3].Step = 7; return p }, nil,
			"step 4 is numbered 7: number the steps 1, 2, 3, … in plan order"},
		{"unknown touch", func(p checkpoint.Plan) checkpoint.Plan { p[0].Touches = []string{"prd"}; return p }, nil,
			`step 1 touches "prd", which is not in the vocabulary`},
		{"recovery without outcome", func(p checkpoint.Plan) checkpoint.Plan { p[3].Recovery = []string{"retry"}; return p }, nil,
			`step 4's recovery ends with "retry": its last item must be one of proceed, recheckpoint, refuse, halt`},
		{"empty recovery", func(p checkpoint.Plan) checkpoint.Plan { p[4].Recovery = nil; return p }, nil,
			"step 5 has no recovery"},
		{"outcome mid-recovery", func(p checkpoint.Plan) checkpoint.Plan {
			p[3].Recovery = []string{"halt", "page the owner", "halt"}
			return p
		}, nil,
			`step 4's recovery has the outcome "halt" before its end`},
		{"rollback on a verify step", func(p checkpoint.Plan) checkpoint.Plan { p[0].RollbackNoneReason = "nothing to undo"; return p }, nil,
			"step 1 is a verify step with a rollback: only action steps have one"},
		{"both rollback and reason", func(p checkpoint.Plan) checkpoint.Plan { p[2].RollbackNoneReason = "cannot"; return p }, nil,
			"step 3 has both a rollback and a rollback_none_reason"},
		{"unknown goal", func(p checkpoint.Plan) checkpoint.Plan { p[2].GoalID = "G9"; return p }, []checkpoint.ActionGoal{{ID: "G1", Goal: "x"}},
			`step 3 names goal_id "G9", which is not an action goal (G1)`},
		{"no description", func(p checkpoint.Plan) checkpoint.Plan { p[4].Description = " "; return p }, nil,
			"step 5 has no description"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs := checkpoint.ValidatePlan(c.mutate(safePlan()), c.goals)
			if len(probs) != 1 {
				t.Fatalf("want exactly one problem, got %q", probs)
			}
			if !strings.HasPrefix(probs[0], c.want) {
				t.Fatalf("problem\n %q\ndoes not start with\n %q", probs[0], c.want)
			}
		})
	}
}

func TestVerdictNeedsAPlanAndReasons(t *testing.T) {
	cases := []struct {
		verdict  string
		plan     checkpoint.Plan
		concerns []string
		want     string
	}{
		{"proceed", safePlan(), nil, ""},
		{"refuse", checkpoint.Plan{}, []string{"it drops customer data with no owner's approval"}, ""},
		{"maybe", safePlan(), nil, `the verdict is "maybe": it must be proceed, revise or refuse`},
		{"", safePlan(), nil, "the verdict is missing"},
		{"proceed", checkpoint.Plan{}, nil, "a proceed verdict needs a plan"},
		{"revise", safePlan(), nil, "a revise verdict needs at least one concern saying why"},
		{"refuse", nil, []string{" "}, "concern 1 is empty"},
	}
	for _, c := range cases {
		probs := checkpoint.ValidateVerdict(c.verdict, c.plan, c.concerns)
		switch {
		case c.want == "" && len(probs) > 0:
			t.Errorf("%s: refused a valid review: %q", c.verdict, probs)
		case c.want != "" && (len(probs) != 1 || !strings.HasPrefix(probs[0], c.want)):
			t.Errorf("%s: problems %q, want one starting %q", c.verdict, probs, c.want)
		}
	}
}
