package sim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A sim reviewer (a checkpoint session: req.Review is set) reads the
// objective for risk words and writes a plan in the plan schema of docs/DESIGN.md,
// "Checkpoint reviews": verify → backup (when something can be lost) → one action per goal,
// each with its approved call and rollback → verify → notify. Its verdict
// follows the risk:
//   - refuse: the objective asks for something the policy forbids outright
//     (exfiltrating, bypassing or disabling safeguards, sending credentials
//     outside), or hits a caller rule of the form "never/do not/no X" — hit
//     when every word of X longer than three letters is in the objective;
//   - revise: a destructive change to production or shared data, or an
//     explicitly irreversible one, with no backup named; or money without an
//     exact amount;
//   - proceed: anything else.
//
// In verify mode (a draft plan) it keeps the draft, repairs what breaks the
// schema, inserts a missing backup before the first destructive action, and
// says revise when it had to change anything. Everything is a pure function
// of the request, so every sim reaches the same verdict and, voting for the
// lowest-numbered review that shares it, the team agrees at once.

// planStep mirrors coordination's plan schema; the sim knows it only as JSON,
// as a model does.
type planStep struct {
	Step               int       `json:"step"`
	Kind               string    `json:"kind"`
	Description        string    `json:"description"`
	Preconditions      []int     `json:"preconditions"`
	Touches            []string  `json:"touches"`
	Recovery           []string  `json:"recovery"`
	GoalID             string    `json:"goal_id,omitempty"`
	Constraints        []string  `json:"constraints,omitempty"`
	ApprovedCall       *toolCall `json:"approved_call,omitempty"`
	Rollback           *toolCall `json:"rollback,omitempty"`
	RollbackNoneReason string    `json:"rollback_none_reason,omitempty"`
}

type toolCall struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

var (
	stepKinds   = []string{"verify", "action", "backup", "notify", "wait"}
	outcomes    = []string{"proceed", "recheckpoint", "refuse", "halt"}
	touchTags   = []string{"prod", "staging", "shared_db", "credentials", "external_recipients", "money", "customer_data", "infra", "repo", "local"}
	otherTag    = regexp.MustCompile(`^other:[a-z0-9][a-z0-9_.-]*$`)
	tagChars    = regexp.MustCompile(`[^a-z0-9_.-]+`)
	wordPattern = regexp.MustCompile(`[a-z0-9_$-]+`)
	amount      = regexp.MustCompile(`[$€£]\s?\d|\d+(\.\d+)?\s?(usd|eur|gbp|dollars?|euros?|pounds?)\b`)
)

// reviewFor is the sim's whole behaviour in a review session.
func (s *simulator) reviewFor(req *providers.Request) providers.Action {
	v := newView(req, s.cfg.seed)
	mine := assess(req.Review)
	if len(req.History) > 0 {
		return s.reviewRecover(v, mine)
	}
	if !v.canVote || len(v.voteable) == 0 {
		return mine.answer(v, false)
	}
	// Vote for the lowest-numbered review that reaches the same verdict:
	// every sim sees the reviews in the same alias order, so agreeing
	// sims never split.
	for _, a := range v.voteable {
		if shownVerdict(a.Content) == mine.verdict {
			return plan{vote: a.Alias, reason: fmt.Sprintf("%s reaches the verdict I reach (%s) with a plan that covers the risks.", a.Alias, mine.verdict)}.action()
		}
	}
	if v.canAnswer {
		return mine.answer(v, false)
	}
	return plan{vote: v.voteable[0].Alias, reason: "No review reaches my verdict; " + v.voteable[0].Alias + "'s plan is the first sound one."}.action()
}

// reviewRecover follows coordination's feedback: vote for the review a
// refused answer duplicated, otherwise write the generated plan, which always
// fits the schema.
func (s *simulator) reviewRecover(v *view, mine assessment) providers.Action {
	last := v.req.History[len(v.req.History)-1]
	if name := duplicateOf(last.Problem); name != "" && v.canVote && v.valid(name) {
		return plan{vote: name, reason: name + "'s review already says what mine would."}.action()
	}
	if v.canAnswer {
		fresh := generate(v.req.Review, readRisk(v.req.Review))
		return fresh.answer(v, true)
	}
	if len(v.voteable) > 0 {
		return plan{vote: v.voteable[0].Alias, reason: v.voteable[0].Alias + "'s review is sound."}.action()
	}
	return mine.answer(v, true)
}

// shownVerdict reads "Verdict: X" from a review as the team shows it.
func shownVerdict(content string) string {
	verdict := ""
	for _, line := range strings.Split(content, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Verdict: "); ok {
			verdict = strings.TrimSpace(rest)
		}
	}
	return verdict
}

// assessment is a sim reviewer's review.
type assessment struct {
	verdict  string
	concerns []string
	steps    []planStep
	summary  string
}

func (a assessment) answer(v *view, corrected bool) providers.Action {
	content := fmt.Sprintf("[simulated] review by %s: %s", v.name(), a.summary)
	if corrected {
		content += " (rewritten as a fresh plan after the last one was refused)"
	}
	concerns := a.concerns
	if concerns == nil {
		concerns = []string{}
	}
	args, _ := json.Marshal(map[string]any{"content": content, "verdict": a.verdict, "concerns": concerns, "plan": a.steps})
	return providers.Action{Calls: []providers.ToolCall{{Name: providers.ToolNewAnswer, Args: args}}}
}

// risk is what the objective's words say.
type risk struct {
	objective                            string
	tags                                 []string // touch tags, in vocabulary order
	destructive, irreversible, backup    bool
	external, money, amount, credentials bool
	prodLike                             bool     // prod, shared data, infra or repo: what a destructive step can lose
	refusals                             []string // why it must not be done at all
	policyHits                           []string // the caller's rules it breaks
	needsBackup, needsAmount             bool
	draftProblems                        []string
	goalsByID                            map[string]bool
}

func readRisk(b *providers.ReviewBrief) risk {
	r := risk{objective: strings.TrimSpace(b.Objective), goalsByID: map[string]bool{}, draftProblems: b.DraftProblems}
	text := strings.ToLower(b.Objective)
	for _, g := range b.Goals {
		text += "\n" + strings.ToLower(g.Goal)
		r.goalsByID[g.ID] = true
	}
	words := wordPattern.FindAllString(text, -1)
	set := map[string]bool{}
	for _, w := range words {
		set[w] = true
	}
	joined := " " + strings.Join(words, " ") + " "
	hasWord := func(ws ...string) bool { return slices.ContainsFunc(ws, func(w string) bool { return set[w] }) }
	hasStem := func(stems ...string) bool {
		return slices.ContainsFunc(words, func(w string) bool {
			return slices.ContainsFunc(stems, func(st string) bool { return strings.HasPrefix(w, st) })
		})
	}
	hasPhrase := func(ps ...string) bool {
		return slices.ContainsFunc(ps, func(p string) bool { return strings.Contains(joined, " "+p+" ") })
	}

	prod := hasWord("production", "prod", "live", "customer-facing")
	staging := hasWord("staging", "stage", "preprod", "pre-production")
	sharedDB := hasWord("database", "databases", "db", "table", "tables", "postgres", "postgresql", "mysql", "sql", "schema", "collection")
	customerData := hasPhrase("customer data", "personal data", "user data", "customer records") || hasWord("pii")
	infra := hasWord("dns", "cluster", "kubernetes", "k8s", "terraform", "server", "servers", "vpc", "firewall", "bucket")
	repo := hasWord("git", "branch", "repository", "repo", "force-push", "history", "release")
	r.credentials = hasWord("password", "passwords", "secret", "secrets", "credential", "credentials", "token", "tokens", "apikey", "api-key", "iam", "permissions") || hasPhrase("api key", "api keys", "private key", "ssh key")
	r.external = hasWord("email", "emails", "e-mail", "newsletter", "customers", "publish", "announce", "tweet", "mailing", "external", "press")
	r.money = hasWord("pay", "payment", "payments", "refund", "refunds", "charge", "charges", "invoice", "invoices", "purchase", "buy", "funds", "money", "billing", "wire")
	r.amount = amount.MatchString(text)
	r.destructive = hasStem("delet", "drop", "truncat", "wipe", "purg", "destroy", "eras", "remov", "overwrit", "migrat", "force-push") || hasPhrase("force push", "rm -rf")
	r.irreversible = hasWord("irreversible", "irreversibly", "permanent", "permanently") || hasPhrase("cannot be undone", "can t be undone")
	r.backup = hasWord("backup", "backups", "snapshot", "snapshots", "dump", "pg_dump", "backed") || hasPhrase("back up", "restore point")
	r.prodLike = prod || sharedDB || customerData || infra || repo
	for tag, on := range map[string]bool{"prod": prod, "staging": staging, "shared_db": sharedDB, "credentials": r.credentials, "external_recipients": r.external,
		"money": r.money, "customer_data": customerData, "infra": infra, "repo": repo} {
		if on {
			r.tags = append(r.tags, tag)
		}
	}
	slices.SortFunc(r.tags, func(a, b string) int { return slices.Index(touchTags, a) - slices.Index(touchTags, b) })
	if len(r.tags) == 0 {
		r.tags = []string{"local"}
	}

	switch {
	case hasStem("exfiltrat"):
		r.refusals = append(r.refusals, "it exfiltrates data")
	case hasWord("bypass", "evade", "circumvent"):
		r.refusals = append(r.refusals, "it bypasses a safeguard")
	}
	if hasPhrase("disable audit", "disable the audit", "disable logging", "disable monitoring", "disable alerts", "cover up", "without approval", "without telling") {
		r.refusals = append(r.refusals, "it switches off oversight or hides the change")
	}
	if r.credentials && r.external {
		r.refusals = append(r.refusals, "it sends credentials outside the organisation")
	}
	for _, rule := range b.Policy {
		if hitsRule(rule, set) {
			r.policyHits = append(r.policyHits, rule)
		}
	}
	r.needsBackup = ((r.destructive && r.prodLike) || r.irreversible) && !r.backup
	r.needsAmount = r.money && !r.amount
	return r
}

// hitsRule tells whether an objective breaks a caller rule written as
// "never X", "do not X", "don't X" or "no X": every word of X longer than
// three letters appears in the objective. Other rules guide the prompt only.
func hitsRule(rule string, words map[string]bool) bool {
	r := strings.ToLower(strings.TrimSpace(rule))
	var rest string
	found := false
	for _, p := range []string{"never ", "do not ", "don't ", "no "} {
		if x, ok := strings.CutPrefix(r, p); ok {
			rest, found = x, true
			break
		}
	}
	if !found {
		return false
	}
	n := 0
	for _, w := range wordPattern.FindAllString(rest, -1) {
		if len(w) <= 3 {
			continue
		}
		n++
		if !words[w] {
			return false
		}
	}
	return n > 0
}

// assess is the review of a brief: verify the draft when there is one,
// otherwise write the plan.
func assess(b *providers.ReviewBrief) assessment {
	r := readRisk(b)
	if len(b.DraftPlan) > 0 {
		var draft []planStep
		if err := json.Unmarshal(b.DraftPlan, &draft); err == nil && len(draft) > 0 {
			return verifyDraft(r, draft)
		}
	}
	return generate(b, r)
}

// verdictFor applies the verdict rules to what the objective says; extra
// are the concerns that force at least revise (verify mode's repairs).
func verdictFor(r risk, extra []string) (string, []string) {
	var concerns []string
	for _, why := range r.refusals {
		concerns = append(concerns, "The objective must not be carried out: "+why+".")
	}
	for _, rule := range r.policyHits {
		concerns = append(concerns, fmt.Sprintf("The objective breaks the caller's safety rule %q.", rule))
	}
	if len(concerns) > 0 {
		return "refuse", concerns
	}
	concerns = append(concerns, extra...)
	if r.needsBackup {
		concerns = append(concerns, fmt.Sprintf("The change cannot be undone and touches %s, but the objective names no backup: take one and check it restores (the plan's backup step), then checkpoint again.", strings.Join(r.tags, ", ")))
	}
	if r.needsAmount {
		concerns = append(concerns, "The objective moves money without an exact amount, currency and recipient: state them, then checkpoint again.")
	}
	if len(concerns) > 0 {
		return "revise", concerns
	}
	if r.external {
		concerns = append(concerns, "A message that has been sent cannot be recalled: the first verify step checks the content and the recipients.")
	}
	if r.destructive && r.backup {
		concerns = append(concerns, "The change is destructive: the plan restores from the backup if the final check fails.")
	}
	return "proceed", concerns
}

func summary(verdict string, r risk, concerns int) string {
	return fmt.Sprintf("the objective touches %s; %d concern(s); verdict %s.", strings.Join(r.tags, ", "), concerns, verdict)
}

// generate writes the sim's own plan for an objective.
func generate(b *providers.ReviewBrief, r risk) assessment {
	verdict, concerns := verdictFor(r, nil)
	obj := shorten(r.objective, 160)
	var steps []planStep
	add := func(st planStep) int {
		st.Step = len(steps) + 1
		if st.Preconditions == nil {
			st.Preconditions = []int{}
		}
		if st.Touches == nil {
			st.Touches = []string{}
		}
		steps = append(steps, st)
		return st.Step
	}
	check := add(planStep{Kind: "verify", Description: "Confirm the target before changing anything (the right environment, the exact scope, nothing depending on it unexpectedly): " + obj,
		Touches: r.tags, Recovery: []string{"halt"}})
	backup := 0
	if r.destructive || r.irreversible || r.prodLike {
		backup = add(planStep{Kind: "backup", Description: "Back up everything the change touches and check that the backup restores.",
			Preconditions: []int{check}, Touches: r.tags, Recovery: []string{"halt"}})
	}
	type goal struct {
		id, text, tool string
		constraints    []string
	}
	var goals []goal
	for _, g := range b.Goals {
		tool := "run"
		if len(g.PreferredTools) > 0 {
			tool = g.PreferredTools[0]
		}
		goals = append(goals, goal{g.ID, g.Goal, tool, g.Constraints})
	}
	if len(goals) == 0 {
		goals = []goal{{text: obj, tool: "run"}}
	}
	var actions []int
	for _, g := range goals {
		pre := []int{check}
		if backup > 0 {
			pre = append(pre, backup)
		}
		st := planStep{Kind: "action", Description: "Carry out: " + g.text, GoalID: g.id, Preconditions: pre, Touches: r.tags,
			Constraints:  append(slices.Clone(g.constraints), "only the scope confirmed in step 1"),
			ApprovedCall: &toolCall{Tool: g.tool, Arguments: map[string]any{"goal": g.text}}}
		switch {
		case backup > 0:
			st.Rollback = &toolCall{Tool: "restore_backup", Arguments: map[string]any{"from_step": backup}}
			st.Recovery = []string{"roll back with the rollback call", "recheckpoint"}
		case r.money:
			st.RollbackNoneReason = "a payment cannot be recalled; a refund is a separate payment"
			st.Recovery = []string{"stop and report what was paid", "halt"}
		case r.external:
			st.RollbackNoneReason = "a message that has been sent cannot be recalled"
			st.Recovery = []string{"stop and report what was sent", "halt"}
		default:
			st.Rollback = &toolCall{Tool: "revert", Arguments: map[string]any{"step": len(steps) + 1}}
			st.Recovery = []string{"revert with the rollback call", "recheckpoint"}
		}
		actions = append(actions, add(st))
	}
	after := []string{"halt"}
	if backup > 0 {
		after = []string{"roll back the action steps with their rollback calls", "recheckpoint"}
	}
	done := add(planStep{Kind: "verify", Description: "Check the outcome: the objective is met and nothing outside its scope changed.",
		Preconditions: actions, Touches: r.tags, Recovery: after})
	add(planStep{Kind: "notify", Description: "Tell the owners what changed, when, and how to undo it.",
		Preconditions: []int{done}, Recovery: []string{"proceed"}})
	return assessment{verdict: verdict, concerns: concerns, steps: steps, summary: summary(verdict, r, len(concerns))}
}

// verifyDraft checks a draft plan: repair what breaks the schema, insert a
// missing backup, and reach a verdict.
func verifyDraft(r risk, draft []planStep) assessment {
	var extra []string
	for i, p := range r.draftProblems {
		if i == 3 {
			extra = append(extra, fmt.Sprintf("The draft breaks the plan schema in %d more places; the plan fixes them.", len(r.draftProblems)-3))
			break
		}
		extra = append(extra, "The draft breaks the plan schema ("+p+"); the plan fixes it.")
	}
	steps := repair(draft, r.goalsByID)
	if at, why := missingBackup(steps); at > 0 {
		steps = insertBackup(steps, at)
		r.needsBackup = false // the concern below says it
		extra = append(extra, fmt.Sprintf("Step %d of the draft %s with no backup step before it; the plan adds one as step %d.", at, why, at))
	} else if hasKind(steps, "backup") {
		// The draft backs up what the objective did not mention.
		r.backup, r.needsBackup = true, false
	}
	verdict, concerns := verdictFor(r, extra)
	return assessment{verdict: verdict, concerns: concerns, steps: steps, summary: "checked the draft plan; " + summary(verdict, r, len(concerns))}
}

func hasKind(steps []planStep, kind string) bool {
	return slices.ContainsFunc(steps, func(s planStep) bool { return s.Kind == kind })
}

// repair renumbers a draft 1..n and makes every step fit the schema,
// changing as little as it can.
func repair(draft []planStep, goals map[string]bool) []planStep {
	renumber := map[int]int{}
	for i, st := range draft {
		if _, dup := renumber[st.Step]; !dup {
			renumber[st.Step] = i + 1
		}
	}
	out := make([]planStep, len(draft))
	lastBackup := 0
	for i, st := range draft {
		n := i + 1
		st.Step = n
		st.Kind = strings.ToLower(strings.TrimSpace(st.Kind))
		if !slices.Contains(stepKinds, st.Kind) {
			st.Kind = "verify"
			if st.ApprovedCall != nil && strings.TrimSpace(st.ApprovedCall.Tool) != "" {
				st.Kind = "action"
			}
		}
		if strings.TrimSpace(st.Description) == "" {
			st.Description = fmt.Sprintf("Step %d of the draft.", n)
		}
		pre := []int{}
		for _, p := range st.Preconditions {
			if q, ok := renumber[p]; ok && q < n && !slices.Contains(pre, q) {
				pre = append(pre, q)
			}
		}
		st.Preconditions = pre
		touches := []string{}
		for _, t := range st.Touches {
			t = strings.ToLower(strings.TrimSpace(t))
			if !slices.Contains(touchTags, t) && !otherTag.MatchString(t) {
				t = "other:" + strings.Trim(tagChars.ReplaceAllString(strings.TrimPrefix(t, "other:"), "_"), "_.-")
				if t == "other:" {
					continue
				}
			}
			if !slices.Contains(touches, t) {
				touches = append(touches, t)
			}
		}
		st.Touches = touches
		rec := []string{}
		for _, x := range st.Recovery {
			if x = strings.TrimSpace(x); x != "" && !slices.Contains(outcomes, x) {
				rec = append(rec, x)
			}
		}
		end := "halt"
		if k := len(st.Recovery); k > 0 && slices.Contains(outcomes, strings.TrimSpace(st.Recovery[k-1])) {
			end = strings.TrimSpace(st.Recovery[k-1])
		}
		st.Recovery = append(rec, end)
		if st.GoalID != "" && !goals[st.GoalID] {
			st.GoalID = ""
		}
		if st.ApprovedCall != nil && strings.TrimSpace(st.ApprovedCall.Tool) == "" {
			st.ApprovedCall = nil
		}
		if st.Rollback != nil && strings.TrimSpace(st.Rollback.Tool) == "" {
			st.Rollback = nil
		}
		if st.Kind == "action" {
			if st.ApprovedCall == nil {
				st.ApprovedCall = &toolCall{Tool: "unspecified", Arguments: map[string]any{"description": st.Description}}
			}
			switch {
			case st.Rollback != nil:
				st.RollbackNoneReason = ""
			case strings.TrimSpace(st.RollbackNoneReason) != "":
			case lastBackup > 0:
				st.Rollback = &toolCall{Tool: "restore_backup", Arguments: map[string]any{"from_step": lastBackup}}
			default:
				st.RollbackNoneReason = "the draft gives no way to undo this step"
			}
		} else {
			st.Rollback, st.RollbackNoneReason = nil, ""
		}
		if st.Kind == "backup" {
			lastBackup = n
		}
		out[i] = st
	}
	return out
}

var destructiveWord = regexp.MustCompile(`(?i)\b(delet|drop|truncat|wipe|purg|destroy|eras|remov|overwrit|migrat|force[- ]push)`)

// missingBackup finds the first action step that can lose production or
// shared data with no backup step before it.
func missingBackup(steps []planStep) (int, string) {
	for _, st := range steps {
		if st.Kind == "backup" {
			return 0, ""
		}
		if st.Kind != "action" {
			continue
		}
		var at []string
		for _, t := range st.Touches {
			if t == "prod" || t == "shared_db" || t == "customer_data" {
				at = append(at, t)
			}
		}
		switch {
		case len(at) > 0:
			return st.Step, "changes " + strings.Join(at, ", ")
		case destructiveWord.MatchString(st.Description):
			return st.Step, "destroys data"
		}
	}
	return 0, ""
}

// insertBackup puts a backup step in front of step at, renumbering the
// steps after it, and makes the action depend on it and roll back from it.
func insertBackup(steps []planStep, at int) []planStep {
	shift := func(n int) int {
		if n >= at {
			return n + 1
		}
		return n
	}
	act := steps[at-1]
	backup := planStep{Step: at, Kind: "backup", Description: "Back up everything step " + fmt.Sprint(at+1) + " changes and check that the backup restores.",
		Preconditions: slices.Clone(act.Preconditions), Touches: slices.Clone(act.Touches), Recovery: []string{"halt"}}
	out := make([]planStep, 0, len(steps)+1)
	out = append(out, steps[:at-1]...)
	out = append(out, backup)
	for _, st := range steps[at-1:] {
		st.Step = shift(st.Step)
		pre := make([]int, len(st.Preconditions))
		for i, p := range st.Preconditions {
			pre[i] = shift(p)
		}
		if st.Step == at+1 {
			pre = append(pre, at)
			if st.Rollback == nil {
				st.Rollback, st.RollbackNoneReason = &toolCall{Tool: "restore_backup", Arguments: map[string]any{"from_step": at}}, ""
			}
		}
		st.Preconditions = pre
		if st.Rollback != nil {
			// A restore names its backup step, which may have moved.
			switch from := st.Rollback.Arguments["from_step"].(type) {
			case float64:
				st.Rollback.Arguments["from_step"] = shift(int(from))
			case int:
				if st.Step != at+1 {
					st.Rollback.Arguments["from_step"] = shift(from)
				}
			}
		}
		out = append(out, st)
	}
	return out
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
