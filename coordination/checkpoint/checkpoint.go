package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// A checkpoint (docs/DESIGN.md, "Checkpoint reviews") is an ordinary session whose
// setup carries a Review: its task text is rendered from the review, its
// new_answer gains plan, verdict and concerns, and a reviewer's answer is
// refused with the exact problem until its plan fits the plan schema. The
// protocol — aliases, labels, votes, consensus, the run loop — is the same as for any
// team.

// ActionGoal is one action the caller wants approved at the level of a tool
// call; the plan's action step that carries it out names it in goal_id.
type ActionGoal struct {
	ID             string   `json:"id,omitempty"`
	Goal           string   `json:"goal"`
	PreferredTools []string `json:"preferred_tools,omitempty"`
	Constraints    []string `json:"constraints,omitempty"`
}

// Review is the setup of a checkpoint session, stored in session.json.
type Review struct {
	Objective string `json:"objective"`
	// DraftPlan is the caller's plan to verify (verify mode); nil when the
	// team writes the plan.
	DraftPlan   Plan         `json:"draft_plan,omitempty"`
	ActionGoals []ActionGoal `json:"action_goals,omitempty"`
	// SafetyPolicy holds the caller's rules, applied after
	// DefaultSafetyPolicy; the session's task records the whole policy the
	// reviewers were shown.
	SafetyPolicy []string `json:"safety_policy,omitempty"`
}

// Verify tells whether the team verifies a draft rather than writing a plan.
func (r *Review) Verify() bool { return len(r.DraftPlan) > 0 }

// DefaultSafetyPolicy is the policy every review applies; a caller's rules
// are added after it.
var DefaultSafetyPolicy = []string{
	"Destruction and reversibility: a step that deletes, drops, truncates, overwrites, migrates or force-pushes anything comes after a backup step whose restore has been checked, and has a rollback; if nothing can undo it, rollback_none_reason says why, and it comes only after every check it depends on.",
	"Production and shared data: a change to production or to data others use is preceded by a verify step that confirms the target (the right environment, the exact scope, nothing broader) and followed by a verify step that checks the result; writes are scoped, never unbounded.",
	"Credentials: secrets, keys and tokens are never printed, logged, committed or sent anywhere; permissions are not widened beyond what the objective needs; rotating or revoking a credential first accounts for everything that uses it.",
	"External recipients: messages, posts and data that leave the organisation go only to recipients the objective names, once, after a verify step has checked the content and the recipient list; a send cannot be undone, so it is never retried blindly.",
	"Money: a payment, purchase, refund or billable resource has its exact amount, currency and recipient in the approved call and a stated limit; when the objective does not give them, the verdict is revise.",
	"Scope: the plan does what the objective asks and nothing more; a goal that cannot be done safely is refused with a concern rather than done in part.",
}

// Limits on what a caller may hand a review.
const (
	maxActionGoals = 20
	maxPolicyRules = 20
)

var goalIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Spec is what a caller gives to review a risky step.
type Spec struct {
	Objective    string
	DraftPlan    Plan // verify mode when non-empty
	ActionGoals  []ActionGoal
	SafetyPolicy []string // added to DefaultSafetyPolicy
	Criteria     []criteria.Item
	Models       []string             // model specs; or
	Agents       []coordination.Agent // agents with ids and personas; neither: the default team
	Context      []string
	// Rules are the session's rules (zero: the defaults). The final answer is
	// always the winner's review as is, so final must be winner and
	// answer_format free.
	Rules coordination.Rules
	// SessionID is the new session's id, or an existing checkpoint session
	// to resume (if cancelled) or to read (if finished).
	SessionID string
	Seed      *int64
	// CommandLine says the operator named Models and Agents on its own
	// command line (coordination.TeamSpec.CommandLine).
	CommandLine bool
}

// Result is what a checkpoint returns: the winning review's verdict
// and plan, every reviewer's concerns, and how the team got there.
type Result struct {
	SessionID  string                   `json:"session_id"`
	Status     string                   `json:"status"`
	Verdict    *string                  `json:"verdict"`
	Plan       Plan                     `json:"plan"`
	Winner     *coordination.Winner     `json:"winner"`
	Concerns   []ReviewerConcerns       `json:"concerns"`
	Votes      []coordination.VoteView  `json:"votes"`
	HowChosen  *string                  `json:"how_chosen"`
	StopReason *coordination.StopReason `json:"stop_reason"`
	// FinalAnswer is the winning review as the team read it: the reviewer's
	// account, then its verdict, concerns and plan.
	FinalAnswer *string                `json:"final_answer"`
	Steps       int                    `json:"steps"`
	Usage       coordination.UsageView `json:"usage"`
	CostUSD     *float64               `json:"cost_usd"`
	Duration    float64                `json:"duration_seconds"`
	SessionDir  string                 `json:"session_dir"`
}

// ReviewerConcerns is one reviewer's latest review in brief.
type ReviewerConcerns struct {
	AgentID  string   `json:"agent_id"`
	Label    string   `json:"label"`
	Model    string   `json:"model"`
	Verdict  string   `json:"verdict"`
	Concerns []string `json:"concerns"`
}

// Run runs a review team on a risky step and returns its verdict and plan.
// Cancelling ctx cancels the run and leaves the session cancelled; calling
// Run again with its SessionID resumes it.
//
// Run is Session, then Service.Run, then Outcome; a caller that must not
// block until the verdict (an MCP call) runs those steps itself, waiting
// on the run for as long as it may.
func Run(ctx context.Context, svc *coordination.Service, spec Spec, progress func(coordination.Progress)) (*Result, error) {
	id, err := Session(ctx, svc, spec)
	if err != nil {
		return nil, err
	}
	res, err := svc.Run(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	return Outcome(context.WithoutCancel(ctx), svc, id, res)
}

// Session names the session a checkpoint runs: an existing review session
// given by id, or a new one written from the spec.
func Session(ctx context.Context, svc *coordination.Service, spec Spec) (string, error) {
	if spec.SessionID != "" {
		s, err := svc.Store().Session(ctx, spec.SessionID)
		switch {
		case err == nil:
			if !s.IsReview() {
				return "", fmt.Errorf("%w: session %s is a team, not a checkpoint review; read it with team_status, or choose another session_id", coordination.ErrBadInput, s.ID)
			}
			if obj := strings.TrimSpace(spec.Objective); obj != "" && obj != readReview(s.Review).Objective {
				return "", fmt.Errorf("%w: checkpoint session %s reviews another objective; leave the objective out to resume it, or choose another session_id", coordination.ErrSessionExists, s.ID)
			}
			return s.ID, nil
		case !errors.Is(err, coordination.ErrSessionNotFound):
			return "", err
		}
	}
	s, err := createReview(ctx, svc, spec)
	if err != nil {
		return "", err
	}
	return s.ID, nil
}

// createReview checks a checkpoint spec and writes its session.
func createReview(ctx context.Context, svc *coordination.Service, spec Spec) (*coordination.Session, error) {
	r := &Review{Objective: strings.TrimSpace(spec.Objective), DraftPlan: spec.DraftPlan}
	if r.Objective == "" {
		return nil, fmt.Errorf("%w: the objective is empty; say what you are about to do, where, and what it changes", coordination.ErrBadInput)
	}
	switch {
	case spec.DraftPlan != nil && len(spec.DraftPlan) == 0:
		return nil, fmt.Errorf("%w: draft_plan has no steps; give its steps, or leave it out to have the team write the plan", coordination.ErrBadInput)
	case len(spec.DraftPlan) > maxPlanSteps:
		return nil, fmt.Errorf("%w: draft_plan has %d steps; a checkpoint reviews at most %d", coordination.ErrBadInput, len(spec.DraftPlan), maxPlanSteps)
	case len(spec.ActionGoals) > maxActionGoals:
		return nil, fmt.Errorf("%w: %d action_goals given; a checkpoint takes at most %d", coordination.ErrBadInput, len(spec.ActionGoals), maxActionGoals)
	case len(spec.SafetyPolicy) > maxPolicyRules:
		return nil, fmt.Errorf("%w: %d safety_policy rules given; add at most %d to the built-in policy", coordination.ErrBadInput, len(spec.SafetyPolicy), maxPolicyRules)
	}
	seen := map[string]bool{}
	for i, g := range spec.ActionGoals {
		g.ID, g.Goal = strings.TrimSpace(g.ID), strings.TrimSpace(g.Goal)
		if g.ID == "" {
			g.ID = fmt.Sprintf("G%d", i+1)
		}
		switch {
		case !goalIDPattern.MatchString(g.ID):
			return nil, fmt.Errorf("%w: action goal id %q must be 1-64 letters, digits, '_', '.' or '-'", coordination.ErrBadInput, g.ID)
		case seen[g.ID]:
			return nil, fmt.Errorf("%w: action goal id %s is used twice; give every goal its own id", coordination.ErrBadInput, g.ID)
		case g.Goal == "":
			return nil, fmt.Errorf("%w: action goal %s has no goal; say what the action must achieve", coordination.ErrBadInput, g.ID)
		}
		seen[g.ID] = true
		r.ActionGoals = append(r.ActionGoals, g)
	}
	for i, rule := range spec.SafetyPolicy {
		if rule = strings.TrimSpace(rule); rule == "" {
			return nil, fmt.Errorf("%w: safety_policy rule %d is empty; write the rule or leave it out", coordination.ErrBadInput, i+1)
		}
		r.SafetyPolicy = append(r.SafetyPolicy, rule)
	}
	rules := spec.Rules
	switch {
	case rules.Final != "" && rules.Final != coordination.FinalWinner:
		return nil, fmt.Errorf("%w: a checkpoint's result is the winning review itself, so final must be winner, not %q", coordination.ErrBadSettings, rules.Final)
	case rules.AnswerFormat != "" && rules.AnswerFormat != coordination.FormatFree:
		return nil, fmt.Errorf("%w: a checkpoint's reviews are structured, so answer_format must be free, not %q", coordination.ErrBadSettings, rules.AnswerFormat)
	case rules.EarlyStop:
		return nil, fmt.Errorf("%w: early_stop needs short answers, which a checkpoint does not use", coordination.ErrBadSettings)
	}
	review, err := marshalReview(r)
	if err != nil {
		return nil, err
	}
	return svc.Create(ctx, coordination.TeamSpec{
		Task:        reviewTask(r),
		Models:      spec.Models,
		Agents:      spec.Agents,
		Rules:       rules,
		Context:     spec.Context,
		Criteria:    spec.Criteria,
		SessionID:   spec.SessionID,
		Seed:        spec.Seed,
		Review:      review,
		CommandLine: spec.CommandLine,
	})
}

// marshalReview is the review as the session carries it: JSON without HTML
// escapes, so that a store writing session.json without them (the file
// store) writes "<" as "<", as it did when the session held the struct; a
// store that escapes still escapes it.
func marshalReview(r *Review) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("the review cannot be written: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// reviewTask is the task text of a review session: what the reviewers are
// asked, the objective, the goals, the draft and its known problems, and the
// whole safety policy.
func reviewTask(r *Review) string {
	var b strings.Builder
	if r.Verify() {
		b.WriteString("Checkpoint review, verify mode: an agent is about to carry out the objective below following the draft plan below. Verify and correct this plan: keep the steps that are sound, fix or add what is missing, and reach a verdict.\n")
	} else {
		b.WriteString("Checkpoint review: an agent is about to carry out the objective below. Write the plan it should follow, and reach a verdict.\n")
	}
	b.WriteString("\nObjective:\n")
	b.WriteString(r.Objective)
	b.WriteString("\n")
	if len(r.ActionGoals) > 0 {
		b.WriteString("\nAction goals (each needs an action step with its goal_id and the exact approved_call, or a concern saying why it cannot be done safely):\n")
		for _, g := range r.ActionGoals {
			fmt.Fprintf(&b, "- %s: %s", g.ID, g.Goal)
			if len(g.PreferredTools) > 0 {
				fmt.Fprintf(&b, " (preferred tools: %s)", strings.Join(g.PreferredTools, ", "))
			}
			if len(g.Constraints) > 0 {
				fmt.Fprintf(&b, " (constraints: %s)", strings.Join(g.Constraints, "; "))
			}
			b.WriteString("\n")
		}
	}
	if r.Verify() {
		draft, _ := json.MarshalIndent(r.DraftPlan, "", "  ")
		b.WriteString("\nDraft plan to verify:\n")
		b.Write(draft)
		b.WriteString("\n")
		if probs := ValidatePlan(r.DraftPlan, r.ActionGoals); len(probs) > 0 {
			b.WriteString("\nThe draft breaks the plan schema here; the corrected plan must not:\n")
			for _, p := range probs {
				b.WriteString("- " + p + "\n")
			}
		}
	}
	b.WriteString("\nSafety policy (built-in rules first, then the caller's):\n")
	for i, rule := range append(append([]string{}, DefaultSafetyPolicy...), r.SafetyPolicy...) {
		fmt.Fprintf(&b, "%d. %s\n", i+1, rule)
	}
	return b.String()
}

// Outcome assembles a checkpoint's result from its team result and
// ledger: the winning review's verdict and plan, every reviewer's latest
// concerns. For a review still running (res from Service.Result) the
// verdict is nil and the concerns are those so far.
func Outcome(ctx context.Context, svc *coordination.Service, id string, res *coordination.TeamResult) (*Result, error) {
	s, err := svc.Store().Session(ctx, id)
	if err != nil {
		return nil, err
	}
	l, err := svc.Ledger(ctx, id)
	if err != nil {
		return nil, err
	}
	st := coordination.Derive(s, l, nil)
	out := &Result{
		SessionID: res.SessionID, Status: res.Status, Winner: res.Winner, Votes: res.Votes,
		HowChosen: res.HowChosen, StopReason: res.StopReason, FinalAnswer: res.FinalAnswer,
		Plan: Plan{}, Concerns: []ReviewerConcerns{}, Steps: res.Steps, Usage: res.Usage, CostUSD: res.CostUSD,
		Duration: res.Duration, SessionDir: res.SessionDir,
	}
	for _, a := range st.Agents {
		e := a.LatestAnswer
		if e == nil || e.Verdict == "" {
			continue
		}
		ag, _ := s.Agent(a.ID)
		out.Concerns = append(out.Concerns, ReviewerConcerns{AgentID: a.ID, Label: e.Label, Model: providers.ShowSpec(ag.Model), Verdict: e.Verdict, Concerns: orEmpty(e.Concerns)})
	}
	if res.Winner == nil {
		return out, nil
	}
	w := st.Agent(res.Winner.AgentID)
	if w == nil {
		return out, nil
	}
	// The winning review is the answer the winner's label names: after a
	// decision nobody answers again, but the label says which one it was.
	for i := len(w.Entries) - 1; i >= 0; i-- {
		e := w.Entries[i]
		if e.Kind != coordination.KindAnswer || e.Label != res.Winner.Label || e.Verdict == "" {
			continue
		}
		verdict := e.Verdict
		out.Verdict = &verdict
		if err := json.Unmarshal(e.Plan, &out.Plan); err != nil {
			return nil, fmt.Errorf("the plan of %s in session %s cannot be read (%v); the review's text is in team_status", e.Label, id, err)
		}
		break
	}
	return out, nil
}

// orEmpty copies s (a ledger's own slice may be shared with the store),
// never returning nil.
func orEmpty(s []string) []string {
	return append([]string{}, s...)
}
