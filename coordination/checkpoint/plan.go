package checkpoint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Plan is a reviewed plan (docs/DESIGN.md, "Checkpoint reviews"): its steps in the order
// they are carried out, numbered 1..n.
type Plan []PlanStep

// PlanStep is one step of a plan.
type PlanStep struct {
	// Step is the step's number: its position in the plan, from 1.
	Step int `json:"step"`
	// Kind is verify, action, backup, notify or wait.
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Preconditions are the numbers of earlier steps that must have
	// succeeded first. Conditions that are not steps are written as verify
	// steps, so every precondition can be checked.
	Preconditions []int `json:"preconditions"`
	// Touches tags what the step affects, from TouchVocabulary or
	// other:<name>.
	Touches []string `json:"touches"`
	// Recovery is what to do if the step fails: instructions in order, then
	// one outcome (proceed, recheckpoint, refuse or halt) as the last item.
	Recovery []string `json:"recovery"`
	// GoalID names the action goal an action step carries out.
	GoalID string `json:"goal_id,omitempty"`
	// Constraints limit how the step may be done.
	Constraints []string `json:"constraints,omitempty"`
	// ApprovedCall is the exact tool call the step may make: required on
	// action steps, allowed on others (a backup's call, a check's query).
	ApprovedCall *PlannedCall `json:"approved_call,omitempty"`
	// Rollback undoes an action step; RollbackNoneReason says why nothing
	// can. An action step has exactly one of them; other steps have neither.
	Rollback           *PlannedCall `json:"rollback,omitempty"`
	RollbackNoneReason string       `json:"rollback_none_reason,omitempty"`
}

// PlannedCall is one tool call a plan approves: the tool's name and its
// arguments, exactly as they will be sent.
type PlannedCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Step kinds.
const (
	StepVerify = "verify"
	StepAction = "action"
	StepBackup = "backup"
	StepNotify = "notify"
	StepWait   = "wait"
)

// StepKinds lists the kinds a plan step may have.
var StepKinds = []string{StepVerify, StepAction, StepBackup, StepNotify, StepWait}

// Recovery outcomes: the last item of every step's recovery.
const (
	RecoverProceed      = "proceed"      // carry on with the plan regardless
	RecoverRecheckpoint = "recheckpoint" // stop and call checkpoint again with what was learned
	RecoverRefuse       = "refuse"       // abandon the objective
	RecoverHalt         = "halt"         // stop where things stand and ask a person
)

// RecoveryOutcomes lists the outcomes a recovery may end with.
var RecoveryOutcomes = []string{RecoverProceed, RecoverRecheckpoint, RecoverRefuse, RecoverHalt}

// Verdicts of a review.
const (
	VerdictProceed = "proceed" // safe to carry out as planned
	VerdictRevise  = "revise"  // not yet: the plan or the objective must change first
	VerdictRefuse  = "refuse"  // must not be done
)

// Verdicts lists the verdicts a review may reach.
var Verdicts = []string{VerdictProceed, VerdictRevise, VerdictRefuse}

// TouchVocabulary is every tag a step's touches may use, with its meaning.
// The vocabulary is closed so that a misspelt tag ("prd") is refused rather
// than silently hiding a production step; anything it lacks is written
// other:<name>, which is explicit about being outside it.
var TouchVocabulary = map[string]string{
	"prod":                "a production system or service",
	"staging":             "a staging or test environment others use",
	"shared_db":           "a database others read or write",
	"credentials":         "secrets, keys, tokens, passwords or permissions",
	"external_recipients": "people or systems outside the organisation: email, posts, webhooks",
	"money":               "payments, purchases, refunds or billable resources",
	"customer_data":       "personal or customer data",
	"infra":               "infrastructure: DNS, networks, clusters, cloud resources",
	"repo":                "a shared source repository: branches, history, releases",
	"local":               "only the local workspace",
}

// touchOrder is the vocabulary in the order messages list it.
var touchOrder = []string{"prod", "staging", "shared_db", "credentials", "external_recipients", "money", "customer_data", "infra", "repo", "local"}

var otherTouch = regexp.MustCompile(`^other:[a-z0-9][a-z0-9_.-]*$`)

// maxPlanSteps bounds a plan: a longer one is a project, not a checkpoint.
const maxPlanSteps = 50

// ValidatePlan checks a plan against the plan schema and returns every
// problem, each naming its step, in words a model can act on (they are sent
// back as the corrective retry). goals are the review's action goals, which
// goal_id must name. A valid plan returns nil. An empty plan is valid here;
// whether a verdict needs steps is ValidateVerdict's concern.
func ValidatePlan(p Plan, goals []ActionGoal) []string {
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if len(p) > maxPlanSteps {
		add("the plan has %d steps; keep it to at most %d", len(p), maxPlanSteps)
		return probs
	}
	for i, st := range p {
		n := i + 1
		if st.Step != n {
			add("step %d is numbered %d: number the steps 1, 2, 3, … in plan order", n, st.Step)
		}
		switch {
		case st.Kind == "":
			add("step %d has no kind: use one of %s", n, strings.Join(StepKinds, ", "))
		case !slices.Contains(StepKinds, st.Kind):
			add("step %d has kind %q: kind must be one of %s", n, st.Kind, strings.Join(StepKinds, ", "))
		}
		if strings.TrimSpace(st.Description) == "" {
			add("step %d has no description: say what the step does", n)
		}
		for _, pre := range st.Preconditions {
			switch {
			case pre == n:
				add("step %d lists itself as a precondition: a step may depend only on earlier steps (%s)", n, earlierSteps(n))
			case pre > n:
				add("step %d has precondition %d, a later step: a step may depend only on earlier steps (%s)", n, pre, earlierSteps(n))
			case pre < 1:
				add("step %d has precondition %d, which is not a step number", n, pre)
			}
		}
		for _, tag := range st.Touches {
			if _, ok := TouchVocabulary[tag]; !ok && !otherTouch.MatchString(tag) {
				add("step %d touches %q, which is not in the vocabulary (%s); write other:<name> for anything else", n, tag, strings.Join(touchOrder, ", "))
			}
		}
		probs = append(probs, recoveryProblems(n, st.Recovery)...)
		if st.GoalID != "" && !slices.ContainsFunc(goals, func(g ActionGoal) bool { return g.ID == st.GoalID }) {
			if len(goals) == 0 {
				add("step %d names goal_id %q, but no action goals were given: leave goal_id out", n, st.GoalID)
			} else {
				add("step %d names goal_id %q, which is not an action goal (%s)", n, st.GoalID, goalIDs(goals))
			}
		}
		if c := st.ApprovedCall; c != nil && strings.TrimSpace(c.Tool) == "" {
			add("step %d has an approved_call without a tool: name the tool", n)
		}
		if c := st.Rollback; c != nil && strings.TrimSpace(c.Tool) == "" {
			add("step %d has a rollback without a tool: name the tool that undoes the step", n)
		}
		hasRollback := st.Rollback != nil || strings.TrimSpace(st.RollbackNoneReason) != ""
		if st.Kind == StepAction {
			if st.ApprovedCall == nil {
				add("step %d is an action without an approved_call: give the exact tool call it may make as {\"tool\": …, \"arguments\": {…}}", n)
			}
			switch {
			case !hasRollback:
				add("step %d is an action without a rollback: give rollback {\"tool\": …, \"arguments\": {…}} that undoes it, or rollback_none_reason saying why nothing can", n)
			case st.Rollback != nil && strings.TrimSpace(st.RollbackNoneReason) != "":
				add("step %d has both a rollback and a rollback_none_reason: give one of them", n)
			}
		} else if hasRollback && slices.Contains(StepKinds, st.Kind) {
			add("step %d is a %s step with a rollback: only action steps have one (make it an action, or leave the rollback out)", n, st.Kind)
		}
	}
	return probs
}

// recoveryProblems checks one step's recovery: a non-empty list whose last
// item, and only its last, is an outcome.
func recoveryProblems(n int, rec []string) []string {
	outcomes := strings.Join(RecoveryOutcomes, ", ")
	if len(rec) == 0 {
		return []string{fmt.Sprintf("step %d has no recovery: list what to do if it fails, ending with one of %s", n, outcomes)}
	}
	var probs []string
	for i, r := range rec {
		r = strings.TrimSpace(r)
		last := i == len(rec)-1
		switch {
		case r == "":
			probs = append(probs, fmt.Sprintf("step %d's recovery item %d is empty", n, i+1))
		case last && !slices.Contains(RecoveryOutcomes, r):
			probs = append(probs, fmt.Sprintf("step %d's recovery ends with %q: its last item must be one of %s", n, r, outcomes))
		case !last && slices.Contains(RecoveryOutcomes, r):
			probs = append(probs, fmt.Sprintf("step %d's recovery has the outcome %q before its end: only the last item is an outcome", n, r))
		}
	}
	return probs
}

// earlierSteps names the steps step n may depend on.
func earlierSteps(n int) string {
	switch n {
	case 1:
		return "step 1 is the first, so none"
	case 2:
		return "here only step 1"
	}
	return fmt.Sprintf("here steps 1–%d", n-1)
}

func goalIDs(goals []ActionGoal) string {
	ids := make([]string, len(goals))
	for i, g := range goals {
		ids[i] = g.ID
	}
	return strings.Join(ids, ", ")
}

// ValidateVerdict checks a review's verdict against its plan and concerns:
// the verdict is one of Verdicts; proceed and revise come with a plan to
// follow (refuse may have none); revise and refuse say why in at least one
// concern; no concern is blank.
func ValidateVerdict(verdict string, p Plan, concerns []string) []string {
	var probs []string
	if !slices.Contains(Verdicts, verdict) {
		if verdict == "" {
			probs = append(probs, "the verdict is missing: give proceed, revise or refuse")
		} else {
			probs = append(probs, fmt.Sprintf("the verdict is %q: it must be proceed, revise or refuse", verdict))
		}
	}
	if len(p) == 0 && (verdict == VerdictProceed || verdict == VerdictRevise) {
		probs = append(probs, fmt.Sprintf("a %s verdict needs a plan: give its steps (only refuse may come with an empty plan)", verdict))
	}
	for i, c := range concerns {
		if strings.TrimSpace(c) == "" {
			probs = append(probs, fmt.Sprintf("concern %d is empty: write the concern or leave it out", i+1))
		}
	}
	if len(concerns) == 0 && (verdict == VerdictRevise || verdict == VerdictRefuse) {
		probs = append(probs, fmt.Sprintf("a %s verdict needs at least one concern saying why", verdict))
	}
	return probs
}
