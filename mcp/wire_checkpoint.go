package mcp

import "github.com/massgen-go/massgen-mcp/coordination/checkpoint"

// checkpoint's wire types, twins of coordination/checkpoint's (wire.go says
// why): its result, and the plan and action goals it takes and returns.

// CheckpointResult is the wire form of checkpoint.Result.
type CheckpointResult struct {
	SessionID  string             `json:"session_id"`
	Status     string             `json:"status"`
	Verdict    *string            `json:"verdict" jsonschema_description:"proceed, revise or refuse: the winning review's verdict; null while running or when no review won."`
	Plan       Plan               `json:"plan"`
	Winner     *Winner            `json:"winner"`
	Concerns   []ReviewerConcerns `json:"concerns"`
	Votes      []VoteView         `json:"votes"`
	HowChosen  *string            `json:"how_chosen"`
	StopReason *string            `json:"stop_reason"`
	// FinalAnswer is the winning review as the team read it: the reviewer's
	// account, then its verdict, concerns and plan.
	FinalAnswer *string   `json:"final_answer"`
	Steps       int       `json:"steps"`
	Usage       UsageView `json:"usage"`
	CostUSD     *float64  `json:"cost_usd"`
	Duration    float64   `json:"duration_seconds"`
	SessionDir  string    `json:"session_dir"`
	// Confirmation is the user's reply to checkpoint{confirm: true}.
	Confirmation *string `json:"confirmation,omitempty" jsonschema_description:"With confirm: accept, decline or cancel, the user's reply to the proceed verdict; absent when not asked."`
}

// ReviewerConcerns is the wire form of checkpoint.ReviewerConcerns.
type ReviewerConcerns struct {
	AgentID  string   `json:"agent_id"`
	Label    string   `json:"label"`
	Model    string   `json:"model"`
	Verdict  string   `json:"verdict"`
	Concerns []string `json:"concerns"`
}

// Plan is the wire form of checkpoint.Plan.
type Plan []PlanStep

// PlanStep is the wire form of checkpoint.PlanStep.
type PlanStep struct {
	// Step is the step's number: its position in the plan, from 1.
	Step int `json:"step" jsonschema_description:"1, 2, 3, … in order."`
	// Kind is verify, action, backup, notify or wait.
	Kind        string `json:"kind" jsonschema:"enum=verify,enum=action,enum=backup,enum=notify,enum=wait"`
	Description string `json:"description"`
	// Preconditions are the numbers of earlier steps that must have
	// succeeded first. Conditions that are not steps are written as verify
	// steps, so every precondition can be checked.
	Preconditions []int `json:"preconditions" jsonschema_description:"Earlier steps that must have succeeded."`
	// Touches tags what the step affects, from TouchVocabulary or
	// other:<name>.
	Touches []string `json:"touches" jsonschema_description:"prod, staging, shared_db, credentials, external_recipients, money, customer_data, infra, repo, local, other:<name>."`
	// Recovery is what to do if the step fails: instructions in order, then
	// one outcome (proceed, recheckpoint, refuse or halt) as the last item.
	Recovery []string `json:"recovery" jsonschema_description:"On failure: what to do, ending with proceed, recheckpoint, refuse or halt."`
	// GoalID names the action goal an action step carries out.
	GoalID string `json:"goal_id,omitempty"`
	// Constraints limit how the step may be done.
	Constraints []string `json:"constraints,omitempty"`
	// ApprovedCall is the exact tool call the step may make: required on
	// action steps, allowed on others (a backup's call, a check's query).
	ApprovedCall *PlannedCall `json:"approved_call,omitempty" jsonschema_description:"The exact call it may make; required on action steps."`
	// Rollback undoes an action step; RollbackNoneReason says why nothing
	// can. An action step has exactly one of them; other steps have neither.
	Rollback           *PlannedCall `json:"rollback,omitempty"`
	RollbackNoneReason string       `json:"rollback_none_reason,omitempty"`
}

// PlannedCall is the wire form of checkpoint.PlannedCall.
type PlannedCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// ActionGoal is the wire form of checkpoint.ActionGoal.
type ActionGoal struct {
	ID             string   `json:"id,omitempty" jsonschema_description:"Default G1, G2, …"`
	Goal           string   `json:"goal"`
	PreferredTools []string `json:"preferred_tools,omitempty"`
	Constraints    []string `json:"constraints,omitempty"`
}

func wireCheckpointResult(v checkpoint.Result) CheckpointResult {
	out := CheckpointResult{
		SessionID: v.SessionID, Status: v.Status, Verdict: v.Verdict, Plan: wirePlan(v.Plan),
		Winner: wireWinnerPtr(v.Winner), Votes: wireVoteViews(v.Votes), HowChosen: v.HowChosen,
		StopReason: (*string)(v.StopReason), FinalAnswer: v.FinalAnswer, Steps: v.Steps, Usage: wireUsageView(v.Usage),
		CostUSD: v.CostUSD, Duration: v.Duration, SessionDir: v.SessionDir,
	}
	if v.Concerns != nil {
		out.Concerns = make([]ReviewerConcerns, len(v.Concerns))
		for i, c := range v.Concerns {
			out.Concerns[i] = ReviewerConcerns{AgentID: c.AgentID, Label: c.Label, Model: c.Model, Verdict: c.Verdict, Concerns: c.Concerns}
		}
	}
	return out
}

func wirePlan(p checkpoint.Plan) Plan {
	if p == nil {
		return nil
	}
	out := make(Plan, len(p))
	for i, s := range p {
		out[i] = PlanStep{
			Step: s.Step, Kind: s.Kind, Description: s.Description, Preconditions: s.Preconditions, Touches: s.Touches,
			Recovery: s.Recovery, GoalID: s.GoalID, Constraints: s.Constraints, ApprovedCall: wirePlannedCall(s.ApprovedCall),
			Rollback: wirePlannedCall(s.Rollback), RollbackNoneReason: s.RollbackNoneReason,
		}
	}
	return out
}

func wirePlannedCall(c *checkpoint.PlannedCall) *PlannedCall {
	if c == nil {
		return nil
	}
	return &PlannedCall{Tool: c.Tool, Arguments: c.Arguments}
}

// plan is the checkpoint plan a caller sent (draft_plan).
func (p Plan) plan() checkpoint.Plan {
	if p == nil {
		return nil
	}
	out := make(checkpoint.Plan, len(p))
	for i, s := range p {
		out[i] = checkpoint.PlanStep{
			Step: s.Step, Kind: s.Kind, Description: s.Description, Preconditions: s.Preconditions, Touches: s.Touches,
			Recovery: s.Recovery, GoalID: s.GoalID, Constraints: s.Constraints, ApprovedCall: s.ApprovedCall.call(),
			Rollback: s.Rollback.call(), RollbackNoneReason: s.RollbackNoneReason,
		}
	}
	return out
}

func (c *PlannedCall) call() *checkpoint.PlannedCall {
	if c == nil {
		return nil
	}
	return &checkpoint.PlannedCall{Tool: c.Tool, Arguments: c.Arguments}
}

// actionGoals are the action goals a caller sent.
func actionGoals(goals []ActionGoal) []checkpoint.ActionGoal {
	if goals == nil {
		return nil
	}
	out := make([]checkpoint.ActionGoal, len(goals))
	for i, g := range goals {
		out[i] = checkpoint.ActionGoal{ID: g.ID, Goal: g.Goal, PreferredTools: g.PreferredTools, Constraints: g.Constraints}
	}
	return out
}
