package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// rewriteOnAdopt is the chance that an agent which has just adopted a peer's
// value writes its own answer with it rather than voting for the peer. Agents
// that change their minds produce new answers in practice, which is what
// drives MassGen's restarts and cost (consensus-quality.md §3.5); half keeps
// both behaviours common without making every mind-change a restart.
const rewriteOnAdopt = 0.5

// view is a request seen through what the agent may do.
type view struct {
	req       *providers.Request
	key       *key
	canAnswer bool
	canVote   bool
	// voteable are the shown answers the agent may vote for, lowest
	// alias number first, one per agent.
	voteable []providers.ShownAnswer
	// taken holds the texts a new answer must not repeat.
	taken *takenTexts
}

// takenTexts is the set of normalised texts an answer must not repeat: the
// shown answers, plus what was refused. Built on first use, since most steps
// vote and never ask.
type takenTexts struct {
	shown []providers.ShownAnswer
	set   map[string]bool
}

func (t *takenTexts) fill() {
	if t.set == nil {
		t.set = make(map[string]bool, len(t.shown)+1)
		for _, a := range t.shown {
			t.set[normText(a.Content)] = true
		}
	}
}

func (t *takenTexts) has(text string) bool {
	t.fill()
	return t.set[normText(text)]
}

func (t *takenTexts) add(text string) {
	t.fill()
	t.set[normText(text)] = true
}

func newView(req *providers.Request, specSeed int64) *view {
	v := view{req: req, key: stepKey(req, specSeed), taken: &takenTexts{shown: req.Shown}}
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			v.canAnswer = v.canAnswer || t.Name == providers.ToolNewAnswer
			v.canVote = v.canVote || t.Name == providers.ToolVote
		}
	} else {
		// A request built without tools (a test, a hand-made call) offers
		// what the protocol would.
		v.canAnswer = !req.Revote
		v.canVote = len(req.Shown) > 0 || len(req.VoteEnum) > 0
	}
	seen := map[string]bool{}
	for _, a := range req.Shown {
		if seen[a.Alias] || (len(req.VoteEnum) > 0 && !slices.Contains(req.VoteEnum, a.Alias)) {
			continue
		}
		seen[a.Alias] = true
		v.voteable = append(v.voteable, a)
	}
	for _, name := range req.VoteEnum {
		if !seen[name] {
			seen[name] = true
			v.voteable = append(v.voteable, providers.ShownAnswer{Alias: name})
		}
	}
	slices.SortStableFunc(v.voteable, func(a, b providers.ShownAnswer) int { return compareAlias(a.Alias, b.Alias) })
	return &v
}

// aliasNumber reads N from "agentN"; names that are not of that form sort
// after every numbered one.
func aliasNumber(name string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "agent"))
	if err != nil || !strings.HasPrefix(name, "agent") {
		return math.MaxInt
	}
	return n
}

func compareAlias(a, b string) int {
	return cmp.Or(cmp.Compare(aliasNumber(a), aliasNumber(b)), cmp.Compare(a, b))
}

func (v *view) valid(name string) bool {
	return slices.ContainsFunc(v.voteable, func(a providers.ShownAnswer) bool { return a.Alias == name })
}

// own is the agent's latest answer as shown to it.
func (v *view) own() (providers.ShownAnswer, bool) {
	if v.req.Self == "" {
		return providers.ShownAnswer{}, false
	}
	for _, a := range v.req.Shown {
		if a.Alias == v.req.Self {
			return a, true
		}
	}
	return providers.ShownAnswer{}, false
}

// name is how synthetic text refers to the acting agent.
func (v *view) name() string {
	return cmp.Or(v.req.AgentID, v.req.Self, "sim")
}

// plan is one workflow call: a vote when vote is set, else an answer.
type plan struct {
	vote   string
	reason string
	answer string
	files  []providers.AnswerFile // an answer's files (build.go)
}

func (p plan) action() providers.Action {
	if p.vote != "" {
		return providers.Action{Calls: []providers.ToolCall{providers.VoteCall(p.vote, p.reason)}}
	}
	return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerFilesCall(p.answer, p.files)}}
}

// knowledge is what the agent knows about a task inside the bank.
type knowledge struct {
	it    item
	truth string // finalvalue.Of form
	first string // the agent's first answer value, as written
	// firstNorm is norm(first).
	firstNorm string
	wrong     string // an item model's wrong value, when it gave one
}

func (k *knowledge) right(value string) float64 {
	if value == k.truth {
		return 1
	}
	return 0
}

// write turns a finalvalue.Of form back into how an answer writes it.
func (k *knowledge) write(value string) string {
	if k.wrong != "" && norm(k.wrong) == value {
		return k.wrong
	}
	return cmp.Or(k.it.display[value], value)
}

// know looks the task up (item model, then bank) and draws the agent's first
// answer. The draw is keyed by session, spec seed, agent and task only, so
// it is the same at every step.
func (s *simulator) know(req *providers.Request) (knowledge, bool) {
	it, inBank := lookupBank(req.Task)
	var m Item
	modelled := false
	if s.items != nil {
		q := ItemQuery{Task: req.Task, AgentID: req.AgentID, SessionSeed: req.SessionSeed, Accuracy: s.cfg.accuracy}
		if inBank {
			q.BankTruth = it.truth
		}
		m, modelled = s.items.FirstAnswer(q)
		if modelled && m.Truth != "" && (!inBank || norm(m.Truth) != norm(it.truth)) {
			it, inBank = givenItem(m.Truth), true
		}
	}
	if !inBank {
		return knowledge{}, false
	}
	k := itemKey(req, s.cfg.seed)
	correct := k.rand("correct").Float64() < s.cfg.accuracy
	wrong := it.nearMiss(k.rand("wrong"))
	if modelled {
		correct = m.Correct
		if m.Wrong != "" {
			wrong = m.Wrong
		}
	}
	if it.display == nil {
		it = it.prepare()
	}
	kn := knowledge{it: it, truth: it.truthNorm, first: it.truth, firstNorm: it.truthNorm}
	if !correct {
		kn.first, kn.firstNorm = wrong, norm(wrong)
		kn.wrong = wrong
	}
	return kn, true
}

// givenItem is an item model's truth as an item, prepared once per value:
// every step of every agent on a benchmark item asks for it, and preparing
// (the near misses) was the sim's largest cost in a benchmark run.
func givenItem(truth string) item {
	key := "\x00given\x00" + truth
	if c, ok := bankCache.Load(key); ok {
		return c.(cached).it
	}
	it := item{kind: kindGiven, subject: "the task", truth: truth}.prepare()
	if bankCacheSize.Add(1) > 4096 {
		bankCache.Clear()
		bankCacheSize.Store(0)
	}
	bankCache.Store(key, cached{it, true})
	return it
}

// decide is the sim's whole behaviour for one request.
func (s *simulator) decide(req *providers.Request) providers.Action {
	if req.Review != nil && req.Purpose == providers.PurposeStep {
		return s.reviewFor(req) // a checkpoint reviewer (review.go)
	}
	v := newView(req, s.cfg.seed)
	k, known := s.know(req)
	switch req.Purpose {
	case providers.PurposePresent:
		return s.present(v, &k, known).action()
	case providers.PurposeSynthesize:
		return s.synthesize(v, &k, known).action()
	case providers.PurposeCriteria:
		return s.criteria(req)
	}
	// The workspace first: reading the task's words is the dearer test, and
	// most steps (no files kept, or the item known) never need it.
	kind := buildNone
	if req.Workspace != "" && !known {
		kind = buildTaskKind(req.Task)
	}
	var p plan
	if kind != buildNone {
		p = s.build(v, kind)
	} else if known {
		p = s.banked(v, &k)
	} else {
		p = s.synthetic(v)
	}
	if len(req.History) > 0 {
		p = s.recover(v, &k, known, p)
	}
	return p.action()
}

// writeValue answers with the value in one of the item's wordings that the
// agent has not been shown.
func (s *simulator) writeValue(v *view, k *knowledge, value string) plan {
	texts := answerTexts(k.it, value, v.key.rand("wording"))
	return plan{answer: firstFree(texts, v.taken, v.req.StepNumber, v.req.Attempt)}
}

func (s *simulator) draft(v *view, revision bool) plan {
	text := draftText(v.req.Task, v.name(), v.req.StepNumber, revision)
	return plan{answer: firstFree([]string{text}, v.taken, v.req.StepNumber, v.req.Attempt)}
}

// banked is a step on a task whose truth the sim knows: hold a belief, maybe
// adopt a peer's value, then vote for the answer that matches it or, now and
// then, re-answer it.
func (s *simulator) banked(v *view, k *knowledge) plan {
	if !v.canVote || len(v.voteable) == 0 {
		return s.writeValue(v, k, k.first)
	}
	belief := k.firstNorm
	own, hasOwn := v.own()
	if hasOwn {
		belief = finalvalue.Of(own.Content)
	}

	// Peers' differing values, the best supported first; ties go to the
	// lowest alias number so every viewer ranks them alike.
	type candidate struct {
		value   string
		support int
		alias   string
	}
	var cands []candidate
	peers := 0
	for _, a := range v.req.Shown {
		if hasOwn && a.Alias == own.Alias {
			continue
		}
		peers++
		val := finalvalue.Of(a.Content)
		if val == belief {
			continue
		}
		i := slices.IndexFunc(cands, func(c candidate) bool { return c.value == val })
		if i < 0 {
			cands = append(cands, candidate{value: val, support: 1, alias: a.Alias})
			continue
		}
		cands[i].support++
		if compareAlias(a.Alias, cands[i].alias) < 0 {
			cands[i].alias = a.Alias
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.support, a.support), compareAlias(a.alias, b.alias))
	})
	// P(adopt x) = conformity · (½ + share of peers holding x) ·
	// truth_bias^(x right − own right) · biases: the research's mind-change
	// model (consensus-quality.md §3.5) with support, a truth bias, and the
	// position and self biases that make label order, rotation and blind
	// first answers matter.
	adopted := false
	r := v.key.rand("adopt")
	for _, c := range cands {
		p := s.cfg.conformity * (0.5 + float64(c.support)/float64(peers)) *
			math.Pow(s.cfg.truthBias, k.right(c.value)-k.right(belief)) * s.bias(v, c.value, belief, hasOwn)
		if r.Float64() < p {
			belief, adopted = c.value, true
			break
		}
	}

	if v.canAnswer {
		chance := s.cfg.revise
		if adopted {
			chance = rewriteOnAdopt
		}
		if v.key.rand("rewrite").Float64() < chance {
			return s.writeValue(v, k, k.write(belief))
		}
	}
	// Vote for the lowest alias number holding the belief: every sim
	// that agrees picks the same answer, so agreement never splits.
	for _, a := range v.voteable {
		if a.Content != "" && finalvalue.Of(a.Content) == belief {
			reasons := voteReasons
			if adopted {
				reasons = adoptReasons
			}
			return plan{vote: a.Alias, reason: fmt.Sprintf(pick(v.key.rand("reason"), reasons), a.Alias, k.write(belief))}
		}
	}
	// Nobody shown holds the belief (the agent's own answer is not among
	// them): say it, or, if only a vote is allowed, back the most common value.
	if v.canAnswer {
		return s.writeValue(v, k, k.write(belief))
	}
	target := plurality(v.voteable)
	return plan{vote: target, reason: fmt.Sprintf("%s's value is the one most answers share.", target)}
}

// bias scales the chance of adopting value on a task the sim knows. The
// answer shown first pulls harder, as it does on LLM readers and judges:
// ×(1+position_bias) towards its value when the agent does not hold it, and
// ÷(1+position_bias) on every change when it does — so without rotation the
// agent shown its own answer first is the most stubborn, and everyone is
// drawn to the same first answer. self_bias is the reluctance to leave one's
// own answer, ×(1−self_bias), which a first step that shows peers before the
// agent has answered (blind_first off) does not have. Negative biases count
// as none here.
func (s *simulator) bias(v *view, value, belief string, hasOwn bool) float64 {
	f := 1.0
	if hasOwn {
		f *= max(0, 1-max(0, s.cfg.selfBias))
	}
	if pull := 1 + max(0, s.cfg.positionBias); pull > 1 && len(v.req.Shown) > 0 {
		switch finalvalue.Of(v.req.Shown[0].Content) {
		case belief:
			f /= pull
		case value:
			f *= pull
		}
	}
	return f
}

// plurality is the agent holding the most common final value, lowest
// alias number first.
func plurality(answers []providers.ShownAnswer) string {
	count := map[string]int{}
	for _, a := range answers {
		count[finalvalue.Of(a.Content)]++
	}
	best, bestN := "", 0
	for _, a := range answers { // already in alias order
		if n := count[finalvalue.Of(a.Content)]; n > bestN {
			best, bestN = a.Alias, n
		}
	}
	return best
}

// synthetic is a step on a task outside the bank: plainly synthetic drafts,
// and votes by a seeded score with the agent's biases.
func (s *simulator) synthetic(v *view) plan {
	if !v.canVote || len(v.voteable) == 0 {
		return s.draft(v, false)
	}
	if v.canAnswer && v.key.rand("revise").Float64() < s.cfg.revise {
		return s.draft(v, true)
	}
	r := v.key.rand("scores")
	best, bestScore := "", math.Inf(-1)
	for _, a := range v.voteable {
		// A shared quality every viewer perceives alike, plus the viewer's
		// own noise: teams mostly agree, as readers of real drafts do, but
		// not always.
		q := float64(hashString("quality", strconv.FormatInt(v.req.SessionSeed, 10), a.Content)>>11) / (1 << 53)
		score := 0.6*q + 0.4*r.Float64()
		if a.Alias == v.req.Self {
			score += s.cfg.selfBias
		}
		if len(v.req.Shown) > 0 && a.Alias == v.req.Shown[0].Alias {
			score += s.cfg.positionBias
		}
		if score > bestScore { // strict: ties keep the lowest alias number
			best, bestScore = a.Alias, score
		}
	}
	return plan{vote: best, reason: fmt.Sprintf(pick(v.key.rand("reason"), draftReasons), best, bestScore)}
}

// present restates the winner's answer as the final deliverable. The winner
// is the agent's own answer when it is shown (the winner's model is called),
// else the first shown answer.
func (s *simulator) present(v *view, k *knowledge, known bool) plan {
	w, ok := v.own()
	if !ok && len(v.req.Shown) > 0 {
		w, ok = v.req.Shown[0], true
	}
	if !ok {
		return s.nothingShown(v, k, known)
	}
	header := fmt.Sprintf("[simulated] final answer by %s, presenting %s.", v.name(), w.Label)
	return s.finalText(v, k, known, header, w)
}

// synthesize merges every shown answer neutrally, keeping the final value
// most of them share (ties: the lowest alias number's).
func (s *simulator) synthesize(v *view, k *knowledge, known bool) plan {
	shown := slices.Clone(v.req.Shown)
	if len(shown) == 0 {
		return s.nothingShown(v, k, known)
	}
	slices.SortStableFunc(shown, func(a, b providers.ShownAnswer) int { return compareAlias(a.Alias, b.Alias) })
	top := plurality(shown)
	rep := shown[slices.IndexFunc(shown, func(a providers.ShownAnswer) bool { return a.Alias == top })]
	share := 0
	labels := make([]string, len(shown))
	for i, a := range shown {
		labels[i] = a.Label
		if finalvalue.Of(a.Content) == finalvalue.Of(rep.Content) {
			share++
		}
	}
	header := fmt.Sprintf("[simulated] synthesis by %s of %s; %d of %d answers share its final value.",
		v.name(), strings.Join(labels, ", "), share, len(shown))
	return s.finalText(v, k, known, header, rep)
}

func (s *simulator) finalText(v *view, k *knowledge, known bool, header string, from providers.ShownAnswer) plan {
	value := finalvalue.Of(from.Content)
	if known {
		texts := answerTexts(k.it, k.write(value), v.key.rand("wording"))
		return plan{answer: header + "\n" + texts[0]}
	}
	text := header + "\n\n" + from.Content
	// A short-answer session compares final values; the header must not
	// change the one the deliverable carries.
	if v.req.ShortAnswer && finalvalue.Of(text) != value {
		text += "\nAnswer: " + value
	}
	return plan{answer: text}
}

func (s *simulator) nothingShown(v *view, k *knowledge, known bool) plan {
	if known {
		return s.writeValue(v, k, k.first)
	}
	return s.draft(v, false)
}

var agentName = regexp.MustCompile(`agent\d+`)

// duplicateOf reads "that is already agent2's answer — vote for it" and the
// like, returning the agent the refused answer duplicated.
func duplicateOf(problem string) string {
	p := strings.ToLower(problem)
	if strings.Contains(p, "already") || strings.Contains(p, "duplicate") || strings.Contains(p, "same as") {
		return agentName.FindString(p)
	}
	return ""
}

// recover adjusts the planned action after coordination refused earlier
// attempts of this step, so that the next attempt is valid: a sim must never
// fail validation three times (docs/DESIGN.md, "Backends and the simulated agents"). It follows the feedback when
// it names the fix, and otherwise changes whatever was refused.
func (s *simulator) recover(v *view, k *knowledge, known bool, normal plan) plan {
	last := v.req.History[len(v.req.History)-1]
	refusedVotes := map[string]bool{}
	for _, t := range v.req.History {
		for _, c := range t.Reply.Calls {
			var args map[string]any
			_ = json.Unmarshal(c.Args, &args) // a refused call may be malformed; then it simply names nothing
			switch c.Name {
			case providers.ToolVote:
				if name, ok := args["agent_id"].(string); ok {
					refusedVotes[name] = true
				}
			case providers.ToolNewAnswer:
				if text, ok := args["content"].(string); ok {
					v.taken.add(text)
				}
			}
		}
	}
	if v.canVote {
		if name := duplicateOf(last.Problem); name != "" && v.valid(name) && !refusedVotes[name] {
			return plan{vote: name, reason: name + "'s answer already says what mine would, so I vote for it."}
		}
	}
	fresh := func() plan {
		if known {
			belief := k.first
			if own, ok := v.own(); ok {
				belief = k.write(finalvalue.Of(own.Content))
			}
			return s.writeValue(v, k, belief)
		}
		return s.draft(v, true)
	}
	validVote := func() (plan, bool) {
		if !v.canVote {
			return plan{}, false
		}
		if normal.vote != "" && v.valid(normal.vote) && !refusedVotes[normal.vote] {
			return normal, true
		}
		for _, a := range v.voteable {
			if !refusedVotes[a.Alias] {
				return plan{vote: a.Alias, reason: a.Alias + "'s answer is a valid choice and a sound one."}, true
			}
		}
		return plan{}, false
	}

	if len(last.Reply.Calls) != 1 {
		// No call, several calls or plain text: the planned action is
		// exactly one call, which is what was asked for.
		if normal.answer != "" && v.taken.has(normal.answer) {
			return fresh()
		}
		return normal
	}
	switch last.Reply.Calls[0].Name {
	case providers.ToolNewAnswer:
		// The answer was refused: vote if voting is allowed, else answer
		// with text not yet seen or refused.
		if p, ok := validVote(); ok {
			return p
		}
		if v.canAnswer {
			return fresh()
		}
	case providers.ToolVote:
		if p, ok := validVote(); ok {
			return p
		}
		if v.canAnswer {
			return fresh()
		}
	}
	if normal.answer != "" && v.taken.has(normal.answer) {
		return fresh()
	}
	return normal
}
