package checkpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// reviewCall is a reviewer's new_answer with its structured arguments.
func reviewCall(content, verdict string, plan any, concerns []string) providers.Action {
	if concerns == nil {
		concerns = []string{}
	}
	args, _ := json.Marshal(map[string]any{"content": content, "verdict": verdict, "plan": plan, "concerns": concerns})
	return coordtest.Act(providers.ToolCall{Name: providers.ToolNewAnswer, Args: args})
}

// reviewer is a scripted reviewer: its first answer is the given review;
// afterwards it votes for the first review shown with the verdict it
// prefers (or the first one offered).
func reviewer(content, verdict, prefers string, plan any, concerns []string) providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if len(req.VoteEnum) == 0 {
			return reviewCall(content+" ("+req.AgentID+")", verdict, plan, concerns), providers.Free(), nil
		}
		// In anonymous order, which every viewer shares (the prompt's order
		// is rotated per viewer).
		for _, name := range req.VoteEnum {
			for _, a := range req.Shown {
				if a.Alias == name && strings.Contains(a.Content, "\nVerdict: "+prefers+"\n") {
					return coordtest.Vote(a.Alias), providers.Free(), nil
				}
			}
		}
		return coordtest.Vote(req.VoteEnum[0]), providers.Free(), nil
	})
}

func seed(n int64) *int64 { return &n }

func TestCheckpointReachesEachVerdictWithScriptedReviewers(t *testing.T) {
	cases := []struct {
		name     string
		verdicts [3]string
		prefer   string
		want     string
	}{
		{"proceed", [3]string{"proceed", "proceed", "proceed"}, "proceed", "proceed"},
		{"revise", [3]string{"proceed", "revise", "revise"}, "revise", "revise"},
		{"refuse", [3]string{"refuse", "revise", "refuse"}, "refuse", "refuse"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			models, _, provs := coordtest.Team(t, 3)
			for i, m := range models {
				var concerns []string
				plan := any(safePlan())
				switch c.verdicts[i] {
				case "revise":
					concerns = []string{"the dump is not checked before the drop"}
				case "refuse":
					concerns = []string{"the table still has readers"}
					plan = []any{}
				}
				provs[m] = reviewer("Checked the table's readers and the dump.", c.verdicts[i], c.prefer, plan, concerns)
			}
			h := coordtest.NewWith(t, provs, coordination.Options{Parallel: 8, Reviews: checkpoint.Reviews{}})
			res, err := checkpoint.Run(context.Background(), h.Service, checkpoint.Spec{
				Objective: "Drop the legacy_orders table from the production database.",
				Models:    models,
				Seed:      seed(7),
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != coordination.StatusFinished || res.Verdict == nil || *res.Verdict != c.want {
				t.Fatalf("status %s verdict %v, want finished %s: %+v", res.Status, res.Verdict, c.want, res)
			}
			if *res.HowChosen != coordination.ChosenConsensus || res.Winner == nil {
				t.Fatalf("want a consensus winner: %+v", res)
			}
			if c.want == "refuse" {
				if res.Plan == nil || len(res.Plan) != 0 {
					t.Fatalf("a refusal with an empty plan returns plan [], got %#v", res.Plan)
				}
			} else if len(res.Plan) != 5 || res.Plan[2].ApprovedCall == nil || res.Plan[2].ApprovedCall.Tool != "sql" {
				t.Fatalf("the winning plan did not come back whole: %+v", res.Plan)
			}
			if len(res.Concerns) != 3 || len(res.Votes) != 3 {
				t.Fatalf("want every reviewer's concerns and vote: %+v / %+v", res.Concerns, res.Votes)
			}
			for i, rc := range res.Concerns {
				if rc.Verdict != c.verdicts[indexOf(models, rc.Model)] || rc.Label == "" || rc.Concerns == nil {
					t.Errorf("concerns %d: %+v", i, rc)
				}
			}
			if res.FinalAnswer == nil || !strings.Contains(*res.FinalAnswer, "Verdict: "+c.want) {
				t.Fatalf("the final answer is the winning review as read: %v", res.FinalAnswer)
			}
			st, err := h.Service.Status(context.Background(), res.SessionID)
			if err != nil || st.Result == nil || st.Result.Status != coordination.StatusFinished {
				t.Fatalf("team_status must work on a checkpoint session: %v %+v", err, st)
			}
		})
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestReviewBreakingThePlanSchemaIsRefusedWithTheExactProblem: the
// corrective retry carries ValidatePlan's sentence, and the corrected review
// is what the ledger keeps.
func TestReviewBreakingThePlanSchemaIsRefusedWithTheExactProblem(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	bad := safePlan()
	bad[1].Preconditions = []int{3}
	scripts[0].Replies = []any{reviewCall("First try.", "proceed", bad, nil), reviewCall("Second try.", "proceed", safePlan(), nil)}
	scripts[1].Replies = []any{reviewCall("Fine.", "proceed", safePlan(), nil)}
	h := coordtest.NewWith(t, provs, coordination.Options{Parallel: 8, Reviews: checkpoint.Reviews{}})
	res, err := checkpoint.Run(context.Background(), h.Service, checkpoint.Spec{Objective: "Drop legacy_orders in prod.", Models: models, Seed: seed(1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := scripts[0].Requests()
	if len(reqs) < 2 || len(reqs[1].History) != 1 {
		t.Fatalf("want a corrective retry: %d requests", len(reqs))
	}
	want := "Your review was refused: step 2 has precondition 3, a later step: a step may depend only on earlier steps (here only step 1). Correct it"
	if p := reqs[1].History[0].Problem; !strings.HasPrefix(p, want) {
		t.Fatalf("problem sent back:\n %q\nwant it to start\n %q", p, want)
	}
	if *res.Verdict != "proceed" {
		t.Fatalf("verdict %v", *res.Verdict)
	}
	for _, e := range h.Ledger(res.SessionID).Agents["agent_a"] {
		if e.Kind == coordination.KindAnswer && !strings.HasPrefix(e.Content, "Second try.") {
			t.Fatalf("the refused review was recorded: %q", e.Content)
		}
	}
}

// TestReviewSessionOffersTheStructuredNewAnswer: a reviewer's tools, system
// text and prompt carry the review contract, the policy and the mode.
func TestReviewSessionOffersTheStructuredNewAnswer(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	for _, s := range scripts {
		s.Replies = []any{reviewCall("ok", "proceed", safePlan(), nil)}
	}
	draft := safePlan()
	draft[0].Preconditions = []int{2} // verify mode must report this to the reviewers
	h := coordtest.NewWith(t, provs, coordination.Options{Parallel: 8, Reviews: checkpoint.Reviews{}})
	_, err := checkpoint.Run(context.Background(), h.Service, checkpoint.Spec{
		Objective:    "Drop legacy_orders in prod.",
		DraftPlan:    draft,
		ActionGoals:  []checkpoint.ActionGoal{{Goal: "drop the table", PreferredTools: []string{"sql"}}},
		SafetyPolicy: []string{"Never touch the billing schema."},
		Models:       models,
		Seed:         seed(2),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := scripts[0].Requests()[0]
	var schema struct {
		Required []string `json:"required"`
	}
	if len(req.Tools) != 1 || json.Unmarshal(req.Tools[0].Schema, &schema) != nil || strings.Join(schema.Required, ",") != "content,verdict,concerns,plan" {
		t.Fatalf("the review's new_answer must require content, verdict, concerns and plan: %+v", req.Tools)
	}
	for _, want := range []string{"Verify and correct this plan", "Objective:\nDrop legacy_orders in prod.", "- G1: drop the table (preferred tools: sql)",
		"Draft plan to verify:", "step 1 has precondition 2, a later step", "Destruction and reversibility", "7. Never touch the billing schema.",
		"Verify and correct the draft plan, then submit your review"} {
		if !strings.Contains(req.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, req.Prompt)
		}
	}
	if !strings.Contains(req.System, "Every answer is a review") {
		t.Errorf("system text lacks the review contract:\n%s", req.System)
	}
	b := req.Review
	if b == nil || b.Objective != "Drop legacy_orders in prod." || len(b.DraftPlan) == 0 || len(b.DraftProblems) != 1 ||
		len(b.Goals) != 1 || b.Goals[0].ID != "G1" || len(b.Policy) != 1 {
		t.Fatalf("review brief %+v", b)
	}
}

// TestSimReviewersReachAVerdictByRisk runs sim teams end to end: the verdict
// follows the objective's risk, plans are valid, and a draft is verified.
func TestSimReviewersReachAVerdictByRisk(t *testing.T) {
	draftWithoutBackup := checkpoint.Plan{
		{Step: 1, Kind: "verify", Description: "Check nobody reads legacy_orders.", Touches: []string{"shared_db"}, Recovery: []string{"halt"}},
		{Step: 2, Kind: "action", Description: "Drop legacy_orders.", Preconditions: []int{1, 3}, Touches: []string{"prod", "shared_db"}, Recovery: []string{"halt"},
			ApprovedCall: &checkpoint.PlannedCall{Tool: "sql", Arguments: map[string]any{"query": "DROP TABLE legacy_orders"}}},
		{Step: 3, Kind: "notify", Description: "Tell the data team.", Preconditions: []int{2}, Recovery: []string{"proceed"}},
	}
	cases := []struct {
		name   string
		spec   checkpoint.Spec
		want   string
		steps  int
		reason string
	}{
		{"safe change proceeds", checkpoint.Spec{Objective: "Fix a typo in the README of my local project."}, "proceed", 4, ""},
		{"irreversible prod change without backup is revised", checkpoint.Spec{Objective: "Drop the legacy_orders table from the production database."}, "revise", 5, "names no backup"},
		{"prod change with a backup proceeds", checkpoint.Spec{Objective: "Take a pg_dump backup, then drop the legacy_orders table from the production database."}, "proceed", 5, ""},
		{"payment without amount is revised", checkpoint.Spec{Objective: "Pay the contractor's invoice."}, "revise", 4, "exact amount"},
		{"credentials sent outside are refused", checkpoint.Spec{Objective: "Email the production database password to the external auditor."}, "refuse", 0, "sends credentials"},
		{"a caller rule is applied", checkpoint.Spec{Objective: "Drop the staging tables after a backup.", SafetyPolicy: []string{"Never drop tables."}}, "refuse", 0, "Never drop tables."},
		{"a draft without backup is verified and fixed", checkpoint.Spec{Objective: "Drop legacy_orders from production.", DraftPlan: draftWithoutBackup}, "revise", 4, "no backup step before it"},
		{"action goals become action steps", checkpoint.Spec{Objective: "Rename two labels in my repo's issue tracker, backed up first.",
			ActionGoals: []checkpoint.ActionGoal{{ID: "rename-a", Goal: "rename bug to defect", PreferredTools: []string{"gh"}}, {ID: "rename-b", Goal: "rename feat to feature"}}}, "proceed", 6, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := coordtest.NewWith(t, nil, coordination.Options{Open: backends.Open, Parallel: 1, Reviews: checkpoint.Reviews{}}).Service
			spec := c.spec
			spec.Models = []string{"sim/strong", "sim", "sim/weak"}
			spec.Seed = seed(3)
			res, err := checkpoint.Run(context.Background(), svc, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict == nil || *res.Verdict != c.want {
				t.Fatalf("verdict %v, want %s: %+v", res.Verdict, c.want, res.Concerns)
			}
			if *res.HowChosen != coordination.ChosenConsensus || res.Steps != 6 {
				t.Fatalf("sims sharing a verdict agree at once: %s after %d steps", *res.HowChosen, res.Steps)
			}
			if c.steps > 0 && len(res.Plan) != c.steps {
				t.Fatalf("plan of %d steps, want %d: %+v", len(res.Plan), c.steps, res.Plan)
			}
			if probs := checkpoint.ValidatePlan(res.Plan, spec.ActionGoals); probs != nil {
				t.Fatalf("the sim's plan breaks the schema: %q", probs)
			}
			if c.reason != "" && !strings.Contains(strings.Join(res.Concerns[0].Concerns, " "), c.reason) {
				t.Fatalf("concerns %q lack %q", res.Concerns[0].Concerns, c.reason)
			}
			for _, st := range res.Plan {
				if st.Kind == "action" && spec.ActionGoals != nil && st.GoalID == "" {
					t.Fatalf("an action step without its goal: %+v", st)
				}
			}
			again, err := checkpoint.Run(context.Background(), svc, spec, nil)
			if err != nil || *again.Verdict != *res.Verdict || coordtest.JSON(again.Plan) != coordtest.JSON(res.Plan) {
				t.Fatalf("the same objective and seed must give the same review: %v", err)
			}
		})
	}
}

func TestVerifyModeKeepsASoundDraft(t *testing.T) {
	svc := coordtest.NewWith(t, nil, coordination.Options{Open: backends.Open, Parallel: 2, Reviews: checkpoint.Reviews{}}).Service
	res, err := checkpoint.Run(context.Background(), svc, checkpoint.Spec{
		Objective: "Drop legacy_orders from the production database.",
		DraftPlan: safePlan(),
		Models:    []string{"sim", "sim"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *res.Verdict != "proceed" || coordtest.JSON(res.Plan) != coordtest.JSON(safePlan()) {
		t.Fatalf("a sound draft comes back as is with proceed: %s %s", *res.Verdict, coordtest.JSON(res.Plan))
	}
}

// TestReviewAnswersRoundTripThroughTheFileStore: answer.json keeps MassGen's
// keys and adds plan, verdict and concerns, which read back whole.
func TestReviewAnswersRoundTripThroughTheFileStore(t *testing.T) {
	dir := t.TempDir()
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open, Parallel: 1, Reviews: checkpoint.Reviews{}})
	res, err := checkpoint.Run(context.Background(), svc, checkpoint.Spec{
		Objective: "Drop the legacy_orders table from the production database.",
		Models:    []string{"sim", "sim"},
		Seed:      seed(5),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(res.SessionDir, "agents", "agent_a", "001", "answer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"agent_id", "answer", "timestamp", "label", "seen_steps", "plan", "verdict", "concerns"} {
		if _, ok := f[k]; !ok {
			t.Errorf("answer.json lacks %q: %s", k, raw)
		}
	}
	// A fresh service reads the ledger from disk, not from a cache.
	svc2 := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open, Reviews: checkpoint.Reviews{}})
	again, err := checkpoint.Run(context.Background(), svc2, checkpoint.Spec{SessionID: res.SessionID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *again.Verdict != *res.Verdict || coordtest.JSON(again.Plan) != coordtest.JSON(res.Plan) || coordtest.JSON(again.Concerns) != coordtest.JSON(res.Concerns) {
		t.Fatalf("read back differently:\n%s\n%s", coordtest.JSON(again), coordtest.JSON(res))
	}
}

// TestSessionJSONKeepsTheReviewAsItWasWritten: the core carries the review
// as JSON; session.json holds it as the file store writes every string (no
// HTML escapes), member for member the Review struct.
func TestSessionJSONKeepsTheReviewAsItWasWritten(t *testing.T) {
	dir := t.TempDir()
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open, Parallel: 1, Reviews: checkpoint.Reviews{}})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "t", Models: []string{"sim", "sim"}, Seed: seed(1),
		Review: json.RawMessage(`{"objective":"Drop <legacy> & co","safety_policy":["Never touch <billing>."]}`)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "sessions", s.ID, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"objective": "Drop <legacy> & co"`) {
		t.Fatalf("session.json escaped or reshaped the review:\n%s", raw)
	}
	res, err := checkpoint.Run(context.Background(), svc, checkpoint.Spec{Objective: "Drop <legacy> & co", Models: []string{"sim", "sim"}, Seed: seed(2), SessionID: "cp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(filepath.Join(res.SessionDir, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Review json.RawMessage `json:"review"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var r checkpoint.Review
	if err := json.Unmarshal(got.Review, &r); err != nil || r.Objective != "Drop <legacy> & co" || !strings.Contains(string(got.Review), "<legacy> &") {
		t.Fatalf("the review in session.json reads %+v (%v): %s", r, err, got.Review)
	}
}

func TestCheckpointRefusesBadInput(t *testing.T) {
	svc := coordtest.NewWith(t, nil, coordination.Options{Open: backends.Open, Parallel: 1, Reviews: checkpoint.Reviews{}}).Service
	ctx := context.Background()
	team, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec checkpoint.Spec
		want error
		says string
	}{
		{checkpoint.Spec{Objective: "  ", Models: []string{"sim"}}, coordination.ErrBadInput, "objective is empty"},
		{checkpoint.Spec{Objective: "x", DraftPlan: checkpoint.Plan{}, Models: []string{"sim"}}, coordination.ErrBadInput, "draft_plan has no steps"},
		{checkpoint.Spec{Objective: "x", Rules: coordination.Rules{Final: "synthesize"}, Models: []string{"sim"}}, coordination.ErrBadSettings, "final must be winner"},
		{checkpoint.Spec{Objective: "x", ActionGoals: []checkpoint.ActionGoal{{ID: "a"}}, Models: []string{"sim"}}, coordination.ErrBadInput, "action goal a has no goal"},
		{checkpoint.Spec{Objective: "x", SafetyPolicy: []string{""}, Models: []string{"sim"}}, coordination.ErrBadInput, "safety_policy rule 1 is empty"},
		{checkpoint.Spec{SessionID: team.ID}, coordination.ErrBadInput, "is a team, not a checkpoint review"},
		{checkpoint.Spec{Objective: "x", Models: []string{"host", "sim"}}, coordination.ErrHostInRunTeam, "host agent"},
	}
	for _, c := range cases {
		_, err := checkpoint.Run(ctx, svc, c.spec, nil)
		if !errors.Is(err, c.want) || !strings.Contains(fmtErr(err), c.says) {
			t.Errorf("%+v: error %v, want %v saying %q", c.spec, err, c.want, c.says)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnreadablePlanItemIsNamed(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 1)
	scripts[0].Replies = []any{reviewCall("x", "proceed", []any{map[string]any{"step": "one"}}, nil), reviewCall("x", "proceed", safePlan(), nil)}
	h := coordtest.NewWith(t, provs, coordination.Options{Parallel: 8, Reviews: checkpoint.Reviews{}})
	if _, err := checkpoint.Run(context.Background(), h.Service, checkpoint.Spec{Objective: "o", Models: models}, nil); err != nil {
		t.Fatal(err)
	}
	want := "Your review was refused: plan item 1 cannot be read: step must be a number, not string."
	if p := scripts[0].Requests()[1].History[0].Problem; !strings.HasPrefix(p, want) {
		t.Fatalf("problem %q, want %q", p, want)
	}
}

// TestRepeatingAShownReviewIsADuplicate: the duplicate rule compares reviews
// as the team reads them (account, verdict, concerns and plan together).
func TestRepeatingAShownReviewIsADuplicate(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	theirs := reviewCall("Checked it.", "proceed", safePlan(), nil)
	scripts[0].Replies = []any{reviewCall("Mine.", "proceed", safePlan(), nil), theirs}
	scripts[1].Replies = []any{theirs}
	h := coordtest.NewWith(t, provs, coordination.Options{Parallel: 8, Reviews: checkpoint.Reviews{}})
	if _, err := checkpoint.Run(context.Background(), h.Service, checkpoint.Spec{Objective: "o", Models: models, Seed: seed(4)}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := scripts[0].Requests()
	if len(reqs) < 3 || len(reqs[2].History) != 1 || !strings.Contains(reqs[2].History[0].Problem, "that is already agent") {
		t.Fatalf("a repeated review must be refused as a duplicate: %d requests", len(reqs))
	}
}

func TestCancelledCheckpointResumesByID(t *testing.T) {
	svc := coordtest.NewWith(t, nil, coordination.Options{Open: backends.Open, Parallel: 2, Reviews: checkpoint.Reviews{}}).Service
	ctx, cancel := context.WithCancel(context.Background())
	res, err := checkpoint.Run(ctx, svc, checkpoint.Spec{
		Objective: "Drop the legacy_orders table from the production database.",
		Models:    []string{"sim:latency=40ms", "sim:latency=40ms"},
		SessionID: "ckpt_resume",
	}, func(p coordination.Progress) {
		if p.Kind == "answer" {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusCancelled || res.Verdict != nil {
		t.Fatalf("a cancelled review has no verdict: %+v", res)
	}
	res, err = checkpoint.Run(context.Background(), svc, checkpoint.Spec{SessionID: "ckpt_resume"}, nil)
	if err != nil || res.Verdict == nil || *res.Verdict != checkpoint.VerdictRevise {
		t.Fatalf("resumed: %v %+v", err, res)
	}
	if _, err := checkpoint.Run(context.Background(), svc, checkpoint.Spec{SessionID: "ckpt_resume", Objective: "something else"}, nil); !errors.Is(err, coordination.ErrSessionExists) {
		t.Fatalf("another objective under the same id: %v", err)
	}
}
