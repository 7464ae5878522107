package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Reviews is the review hook (coordination.Reviews) the core asks wherever
// a review session differs from a team: a program that offers checkpoint
// reviews passes it to every Service it opens (coordination.Options.Reviews).
// The review it is handed is the JSON of a Review, as Run wrote it.
type Reviews struct{}

var _ coordination.Reviews = Reviews{}

// Brief is the review as providers see it beside the prompt.
func (Reviews) Brief(raw json.RawMessage) *providers.ReviewBrief { return readReview(raw).brief() }

// Rules close a reviewer's system prompt.
func (Reviews) Rules() string { return reviewRules }

// FirstStep closes a reviewer's blind first prompt.
func (Reviews) FirstStep(raw json.RawMessage) string { return reviewFirstStep(readReview(raw)) }

// AnswerTool is the review's new_answer: the review, verdict, concerns and
// plan.
func (Reviews) AnswerTool() providers.Tool { return reviewAnswerToolShared }

// Check reads a reviewer's new_answer against the plan schema.
func (Reviews) Check(raw, args json.RawMessage) (coordination.ReviewAnswer, string) {
	return checkReview(readReview(raw), args)
}

// readReview reads a session's review. A review that cannot be read (a
// damaged session.json the integrity check reports) reads as one without
// goals or a draft, so the team still answers under the schema.
func readReview(raw json.RawMessage) *Review {
	var r Review
	_ = json.Unmarshal(raw, &r)
	return &r
}

// reviewAnswerToolShared is the review's new_answer, built once (read-only).
var reviewAnswerToolShared = reviewAnswerTool()

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

// reviewAnswerTool is new_answer in a review session. Every argument is
// required: a review without a verdict or a plan cannot be compared.
func reviewAnswerTool() providers.Tool {
	return providers.Tool{
		Name:        providers.ToolNewAnswer,
		Description: "Submit a new and improved review: your account, verdict, concerns and the whole plan.",
		Schema:      reviewAnswerSchema,
	}
}

var reviewAnswerSchema = func() json.RawMessage {
	call := func(desc string) map[string]any {
		return map[string]any{"type": "object", "description": desc, "properties": map[string]any{
			"tool":      map[string]any{"type": "string", "description": "The tool's name."},
			"arguments": map[string]any{"type": "object", "description": "The call's arguments, exactly as they will be sent."},
		}, "required": []string{"tool", "arguments"}, "additionalProperties": false}
	}
	strs := func(desc string) map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
	}
	step := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"step":                 map[string]any{"type": "integer", "description": "The step's number: 1, 2, 3, … in plan order."},
			"kind":                 map[string]any{"type": "string", "enum": StepKinds, "description": "verify (check, change nothing), action (the change), backup, notify, wait."},
			"description":          map[string]any{"type": "string", "description": "What the step does, precisely enough to carry out."},
			"preconditions":        map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "Numbers of earlier steps that must have succeeded first; never this step or a later one."},
			"touches":              strs("What the step affects: prod, staging, shared_db, credentials, external_recipients, money, customer_data, infra, repo, local, or other:<name>."),
			"recovery":             strs("What to do if the step fails, in order, ending with proceed, recheckpoint, refuse or halt."),
			"goal_id":              map[string]any{"type": "string", "description": "The action goal this action step carries out."},
			"constraints":          strs("Limits on how the step may be done."),
			"approved_call":        call("The exact tool call this step may make; required on action steps."),
			"rollback":             call("The tool call that undoes this action step."),
			"rollback_none_reason": map[string]any{"type": "string", "description": "Why this action step cannot be undone (instead of rollback)."},
		},
		"required":             []string{"step", "kind", "description", "preconditions", "touches", "recovery"},
		"additionalProperties": false,
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"content":  map[string]any{"type": "string", "description": "What you checked and why you reach your verdict. It replaces your previous review; write it whole."},
			"verdict":  map[string]any{"type": "string", "enum": Verdicts, "description": "proceed (safe as planned), revise (change the plan or objective first), refuse (must not be done)."},
			"concerns": strs("Each risk you see, one per item; revise and refuse need at least one."),
			"plan":     map[string]any{"type": "array", "items": step, "description": "The steps to follow, in order (empty only with verdict refuse)."},
		},
		"required":             []string{"content", "verdict", "concerns", "plan"},
		"additionalProperties": false,
	}
	data, _ := json.Marshal(schema)
	return data
}()

const reviewShape = `new_answer in a review needs a JSON object {"content": "<what you checked and why>", "verdict": "proceed|revise|refuse", "concerns": ["<risk>", …], "plan": [{"step": 1, "kind": "verify", "description": "…", "preconditions": [], "touches": [], "recovery": ["halt"]}, …]}`

// checkReview validates a reviewer's new_answer: its shape, the plan schema
// and the verdict. The core then applies the duplicate rule to the review's
// text as peers read it.
func checkReview(r *Review, raw json.RawMessage) (coordination.ReviewAnswer, string) {
	var args struct {
		Content  *string         `json:"content"`
		Verdict  string          `json:"verdict"`
		Concerns []string        `json:"concerns"`
		Plan     json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.Content == nil {
		return coordination.ReviewAnswer{}, reviewShape + "."
	}
	if strings.TrimSpace(*args.Content) == "" {
		return coordination.ReviewAnswer{}, "new_answer needs non-empty content: say what you checked and why you reach your verdict."
	}
	plan, prob := decodePlan(args.Plan)
	if prob != "" {
		return coordination.ReviewAnswer{}, prob
	}
	probs := append(ValidatePlan(plan, r.ActionGoals), ValidateVerdict(args.Verdict, plan, args.Concerns)...)
	if len(probs) > 0 {
		return coordination.ReviewAnswer{}, "Your review was refused: " + strings.Join(probs, "; ") + ". Correct it and call new_answer again with content, verdict, concerns and the whole plan."
	}
	concerns := make([]string, len(args.Concerns))
	for i, c := range args.Concerns {
		concerns[i] = strings.TrimSpace(c)
	}
	a := coordination.ReviewAnswer{Text: reviewText(strings.TrimSpace(*args.Content), args.Verdict, concerns, plan), Verdict: args.Verdict, Concerns: concerns}
	a.Plan, _ = json.Marshal(plan)
	return a, ""
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
