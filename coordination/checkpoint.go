package coordination

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// A checkpoint (DESIGN.md §2 "Checkpoint") is an ordinary session whose
// setup carries a Review: its task text is rendered from the review, its
// new_answer gains plan, verdict and concerns, and a reviewer's answer is
// refused with the exact problem until its plan fits the plan schema. The
// protocol — aliases, labels, votes, consensus, the run loop — is the same as for any
// team.

// ActionGoal is one action the caller wants approved at the level of a tool
// call; the plan's action step that carries it out names it in goal_id.
type ActionGoal struct {
	ID             string   `json:"id,omitempty" jsonschema_description:"The goal's id, e.g. G1 (default G1, G2, …)."`
	Goal           string   `json:"goal" jsonschema_description:"What the action must achieve."`
	PreferredTools []string `json:"preferred_tools,omitempty" jsonschema_description:"Tools the caller would use for it."`
	Constraints    []string `json:"constraints,omitempty" jsonschema_description:"Limits the action must respect."`
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

// CheckpointSpec is what a caller gives to review a risky step.
type CheckpointSpec struct {
	Objective    string
	DraftPlan    Plan // verify mode when non-empty
	ActionGoals  []ActionGoal
	SafetyPolicy []string // added to DefaultSafetyPolicy
	Criteria     []criteria.Item
	Models       []string // model specs; or
	Agents       []Agent  // agents with ids and personas; neither: the default team
	Context      []string
	// Rules are the session's rules (zero: the defaults). The final answer is
	// always the winner's review as is, so final must be winner and
	// answer_format free.
	Rules Rules
	// SessionID is the new session's id, or an existing checkpoint session
	// to resume (if cancelled) or to read (if finished).
	SessionID string
	Seed      *int64
}

// CheckpointResult is what a checkpoint returns: the winning review's verdict
// and plan, every reviewer's concerns, and how the team got there.
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
}

// ReviewerConcerns is one reviewer's latest review in brief.
type ReviewerConcerns struct {
	AgentID  string   `json:"agent_id"`
	Label    string   `json:"label"`
	Model    string   `json:"model"`
	Verdict  string   `json:"verdict"`
	Concerns []string `json:"concerns"`
}

// Checkpoint runs a review team on a risky step and returns its verdict and
// plan. Cancelling ctx cancels the run and leaves the session cancelled;
// calling Checkpoint again with its SessionID resumes it.
func (svc *Service) Checkpoint(ctx context.Context, spec CheckpointSpec, progress func(Progress)) (*CheckpointResult, error) {
	id, err := svc.reviewSession(ctx, spec)
	if err != nil {
		return nil, err
	}
	res, err := svc.Run(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	return svc.checkpointResult(context.WithoutCancel(ctx), id, res)
}

// reviewSession names the session a checkpoint runs: an existing review
// session given by id, or a new one.
func (svc *Service) reviewSession(ctx context.Context, spec CheckpointSpec) (string, error) {
	if spec.SessionID != "" {
		s, err := svc.session(ctx, spec.SessionID)
		switch {
		case err == nil:
			if s.Review == nil {
				return "", fmt.Errorf("%w: session %s is a team, not a checkpoint review; read it with team_status, or choose another session_id", ErrBadInput, s.ID)
			}
			if obj := strings.TrimSpace(spec.Objective); obj != "" && obj != s.Review.Objective {
				return "", fmt.Errorf("%w: checkpoint session %s reviews another objective; leave the objective out to resume it, or choose another session_id", ErrSessionExists, s.ID)
			}
			return s.ID, nil
		case !errors.Is(err, ErrSessionNotFound):
			return "", err
		}
	}
	s, err := svc.createReview(ctx, spec)
	if err != nil {
		return "", err
	}
	return s.ID, nil
}

// createReview checks a checkpoint spec and writes its session.
func (svc *Service) createReview(ctx context.Context, spec CheckpointSpec) (*Session, error) {
	r := &Review{Objective: strings.TrimSpace(spec.Objective), DraftPlan: spec.DraftPlan}
	if r.Objective == "" {
		return nil, fmt.Errorf("%w: the objective is empty; say what you are about to do, where, and what it changes", ErrBadInput)
	}
	switch {
	case spec.DraftPlan != nil && len(spec.DraftPlan) == 0:
		return nil, fmt.Errorf("%w: draft_plan has no steps; give its steps, or leave it out to have the team write the plan", ErrBadInput)
	case len(spec.DraftPlan) > maxPlanSteps:
		return nil, fmt.Errorf("%w: draft_plan has %d steps; a checkpoint reviews at most %d", ErrBadInput, len(spec.DraftPlan), maxPlanSteps)
	case len(spec.ActionGoals) > maxActionGoals:
		return nil, fmt.Errorf("%w: %d action_goals given; a checkpoint takes at most %d", ErrBadInput, len(spec.ActionGoals), maxActionGoals)
	case len(spec.SafetyPolicy) > maxPolicyRules:
		return nil, fmt.Errorf("%w: %d safety_policy rules given; add at most %d to the built-in policy", ErrBadInput, len(spec.SafetyPolicy), maxPolicyRules)
	}
	seen := map[string]bool{}
	for i, g := range spec.ActionGoals {
		g.ID, g.Goal = strings.TrimSpace(g.ID), strings.TrimSpace(g.Goal)
		if g.ID == "" {
			g.ID = fmt.Sprintf("G%d", i+1)
		}
		switch {
		case !goalIDPattern.MatchString(g.ID):
			return nil, fmt.Errorf("%w: action goal id %q must be 1-64 letters, digits, '_', '.' or '-'", ErrBadInput, g.ID)
		case seen[g.ID]:
			return nil, fmt.Errorf("%w: action goal id %s is used twice; give every goal its own id", ErrBadInput, g.ID)
		case g.Goal == "":
			return nil, fmt.Errorf("%w: action goal %s has no goal; say what the action must achieve", ErrBadInput, g.ID)
		}
		seen[g.ID] = true
		r.ActionGoals = append(r.ActionGoals, g)
	}
	for i, rule := range spec.SafetyPolicy {
		if rule = strings.TrimSpace(rule); rule == "" {
			return nil, fmt.Errorf("%w: safety_policy rule %d is empty; write the rule or leave it out", ErrBadInput, i+1)
		}
		r.SafetyPolicy = append(r.SafetyPolicy, rule)
	}
	rules := spec.Rules
	switch {
	case rules.Final != "" && rules.Final != FinalWinner:
		return nil, fmt.Errorf("%w: a checkpoint's result is the winning review itself, so final must be winner, not %q", ErrBadSettings, rules.Final)
	case rules.AnswerFormat != "" && rules.AnswerFormat != FormatFree:
		return nil, fmt.Errorf("%w: a checkpoint's reviews are structured, so answer_format must be free, not %q", ErrBadSettings, rules.AnswerFormat)
	case rules.EarlyStop:
		return nil, fmt.Errorf("%w: early_stop needs short answers, which a checkpoint does not use", ErrBadSettings)
	}
	return svc.Create(ctx, TeamSpec{
		Task:      reviewTask(r),
		Models:    spec.Models,
		Agents:    spec.Agents,
		Rules:     rules,
		Context:   spec.Context,
		Criteria:  spec.Criteria,
		SessionID: spec.SessionID,
		Seed:      spec.Seed,
		Review:    r,
	})
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

// reviewRules close the system prompt of a review session: what a review is
// and the plan schema, so every provider sees the same contract as the tool
// schema states.
const reviewRules = `

This team reviews a plan before an agent carries out a risky or hard-to-undo step. Every answer is a review, submitted with new_answer:
- content: what you checked and why you reach your verdict, briefly.
- verdict: proceed (safe to carry out exactly as planned), revise (not yet: the plan or the objective must change first; the plan shows the corrected version), or refuse (must not be done).
- concerns: each risk you see, one per item; revise and refuse need at least one.
- plan: the steps in order, numbered 1, 2, 3, …; kind is verify, action, backup, notify or wait; preconditions list only numbers of earlier steps; touches uses prod, staging, shared_db, credentials, external_recipients, money, customer_data, infra, repo, local or other:<name>; recovery lists what to do if the step fails and ends with proceed, recheckpoint, refuse or halt; every action step has approved_call {tool, arguments} (the exact call approved) and either rollback {tool, arguments} or rollback_none_reason. Only refuse may come with an empty plan.
Apply the safety policy given with the task. Vote for the review whose plan achieves the objective most safely and whose verdict is right under the policy.`

// reviewFirstStep closes a reviewer's blind first prompt.
func reviewFirstStep(r *Review) string {
	if r.Verify() {
		return "\nNo reviews exist yet. Verify and correct the draft plan, then submit your review with new_answer: content, verdict, plan and concerns.\n"
	}
	return "\nNo reviews exist yet. Write the plan and submit your review with new_answer: content, verdict, plan and concerns.\n"
}

// brief is the review as providers see it beside the prompt text.
func (r *Review) brief() *providers.ReviewBrief {
	if r == nil {
		return nil
	}
	b := &providers.ReviewBrief{Objective: r.Objective, Policy: r.SafetyPolicy}
	for _, g := range r.ActionGoals {
		b.Goals = append(b.Goals, providers.ReviewGoal{ID: g.ID, Goal: g.Goal, PreferredTools: g.PreferredTools, Constraints: g.Constraints})
	}
	if r.Verify() {
		b.DraftPlan, _ = json.Marshal(r.DraftPlan)
		b.DraftProblems = ValidatePlan(r.DraftPlan, r.ActionGoals)
	}
	return b
}

const reviewShape = `new_answer in a review needs a JSON object {"content": "<what you checked and why>", "verdict": "proceed|revise|refuse", "concerns": ["<risk>", …], "plan": [{"step": 1, "kind": "verify", "description": "…", "preconditions": [], "touches": [], "recovery": ["halt"]}, …]}`

// checkReview validates a reviewer's new_answer: its shape, the plan schema,
// the verdict, then the duplicate rule on the review as peers read it.
func checkReview(v *view, r *Review, raw json.RawMessage) (decision, string) {
	var args struct {
		Content  *string         `json:"content"`
		Verdict  string          `json:"verdict"`
		Concerns []string        `json:"concerns"`
		Plan     json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.Content == nil {
		return decision{}, reviewShape + "."
	}
	if strings.TrimSpace(*args.Content) == "" {
		return decision{}, "new_answer needs non-empty content: say what you checked and why you reach your verdict."
	}
	plan, prob := decodePlan(args.Plan)
	if prob != "" {
		return decision{}, prob
	}
	probs := append(ValidatePlan(plan, r.ActionGoals), ValidateVerdict(args.Verdict, plan, args.Concerns)...)
	if len(probs) > 0 {
		return decision{}, "Your review was refused: " + strings.Join(probs, "; ") + ". Correct it and call new_answer again with content, verdict, concerns and the whole plan."
	}
	concerns := make([]string, len(args.Concerns))
	for i, c := range args.Concerns {
		concerns[i] = strings.TrimSpace(c)
	}
	text := reviewText(strings.TrimSpace(*args.Content), args.Verdict, concerns, plan)
	d, prob := checkAnswer(v, text, false)
	if prob != "" {
		return d, prob
	}
	d.Plan, _ = json.Marshal(plan)
	d.Verdict, d.Concerns = args.Verdict, concerns
	return d, ""
}

// decodePlan reads the plan argument step by step, so a step that cannot be
// read is named with what is wrong in it.
func decodePlan(raw json.RawMessage) (Plan, string) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, "Your review was refused: it has no plan. Give plan as a list of steps (an empty list only with verdict refuse)."
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, "Your review was refused: plan must be a list of steps, each an object {step, kind, description, preconditions, touches, recovery, …}."
	}
	plan := make(Plan, 0, len(items))
	for i, item := range items {
		dec := json.NewDecoder(bytes.NewReader(item))
		dec.DisallowUnknownFields() // a misspelt rollback_none_reason would otherwise vanish
		var st PlanStep
		if err := dec.Decode(&st); err != nil {
			return nil, fmt.Sprintf("Your review was refused: plan item %d cannot be read: %s. Correct it and call new_answer again.", i+1, readableJSONError(err))
		}
		plan = append(plan, st)
	}
	return plan, ""
}

// readableJSONError says what encoding/json found wrong without its Go type
// names.
func readableJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field == "preconditions" {
		return fmt.Sprintf("preconditions must list numbers of earlier steps, e.g. [1, 2], not %s", te.Value)
	}
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map", "struct", "ptr":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "another type"
}

// reviewText is a review as the team reads it and as its answer is stored:
// the reviewer's account, then the verdict, concerns and plan. The duplicate
// rule compares these texts, so a review that repeats a shown one in every
// part is refused, while one with the same words but another plan is not.
func reviewText(content, verdict string, concerns []string, p Plan) string {
	var b strings.Builder
	b.WriteString(content)
	b.WriteString("\n\nVerdict: " + verdict + "\n")
	if len(concerns) == 0 {
		b.WriteString("Concerns: none\n")
	} else {
		b.WriteString("Concerns:\n")
		for _, c := range concerns {
			b.WriteString("- " + c + "\n")
		}
	}
	// One step a line: exact JSON a peer can copy into its own review,
	// without the bulk of indentation.
	b.WriteString("Plan:\n[")
	for i, st := range p {
		line, _ := json.Marshal(st)
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	if len(p) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	return b.String()
}

// checkpointResult assembles a checkpoint's result from its team result and
// ledger: the winning review's verdict and plan, every reviewer's latest
// concerns.
func (svc *Service) checkpointResult(ctx context.Context, id string, res *TeamResult) (*CheckpointResult, error) {
	s, _, st, err := svc.load(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &CheckpointResult{
		SessionID: res.SessionID, Status: res.Status, Winner: res.Winner, Votes: res.Votes,
		HowChosen: res.HowChosen, StopReason: res.StopReason, FinalAnswer: res.FinalAnswer,
		Concerns: []ReviewerConcerns{}, Steps: res.Steps, Usage: res.Usage, CostUSD: res.CostUSD,
		Duration: res.Duration, SessionDir: res.SessionDir,
	}
	for _, a := range st.Agents {
		e := a.LatestAnswer
		if e == nil || e.Verdict == "" {
			continue
		}
		ag, _ := s.Agent(a.ID)
		out.Concerns = append(out.Concerns, ReviewerConcerns{AgentID: a.ID, Label: e.Label, Model: ag.Model, Verdict: e.Verdict, Concerns: orEmpty(e.Concerns)})
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
		if e.Kind != KindAnswer || e.Label != res.Winner.Label || e.Verdict == "" {
			continue
		}
		verdict := e.Verdict
		out.Verdict = &verdict
		out.Plan = Plan{}
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
