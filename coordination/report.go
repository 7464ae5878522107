package coordination

import (
	"errors"
	"math"
	"slices"

	"github.com/massgen-go/massgen-mcp/providers"
)

func isExists(err error) bool { return errors.Is(err, ErrSessionExists) }

// Totals sums usage over an agent's entries; the cost stays known only while
// every entry's cost is known.
func Totals(entries []Entry) providers.Usage {
	u := providers.Free()
	for _, e := range entries {
		u = u.Add(e.Usage)
	}
	return u
}

func usageView(u providers.Usage) UsageView {
	return UsageView{Input: u.Input, CachedInput: u.CachedInput, Output: u.Output, Reasoning: u.Reasoning}
}

// agentSpend is what agent id spent: its steps' usage and the session's
// usage entries naming it alone (its cancelled calls, a final call it made,
// a dead holder's spend), so the agents' rows add up to the session's total.
func agentSpend(l *Ledger, id string) providers.Usage {
	u := Totals(l.Agents[id])
	for _, e := range l.Session {
		if e.Kind == SessionUsage && e.Usage != nil && len(e.Agents) == 1 && e.Agents[0] == id {
			u = u.Add(*e.Usage)
		}
	}
	return u
}

// sessionUsage sums every agent's usage, the session's usage entries
// (cancelled calls, the final call) and any extra.
func sessionUsage(l *Ledger, extra providers.Usage) providers.Usage {
	u := extra
	for _, entries := range l.Agents {
		u = u.Add(Totals(entries))
	}
	for _, e := range l.Session {
		if e.Kind == SessionUsage && e.Usage != nil {
			u = u.Add(*e.Usage)
		}
	}
	return u
}

// refreshed is a recorded result brought up to the ledger: every entry
// landed since (a step in flight when a forced end was decided) is in its
// answers, votes, steps, usage and cost, while the decision — status, stop
// reason, how chosen, winner, final answer — stays as recorded.
func (svc *Service) refreshed(s *Session, l *Ledger, st *State, rec *TeamResult) *TeamResult {
	base := svc.baseResult(s, l, st, providers.Free())
	r := rec.Clone()
	r.Votes, r.Answers, r.Steps, r.Agents = base.Votes, keepWinner(base.Answers, rec), base.Steps, base.Agents
	r.Usage, r.CostUSD, r.BudgetEnforced = base.Usage, base.CostUSD, base.BudgetEnforced
	r.NextAgents = []string{}
	if r.Winner != nil && Deref(r.StopReason) == StopBudget {
		// Its spend is the refreshed one, as the result's cost is (other
		// causes keep what was true when the stop was decided: who was
		// still working then has landed or been cancelled since).
		r.NotAgreed = notAgreed(s, nil, r, Deref(r.HowChosen), Deref(r.StopReason))
	}
	return r
}

// keepWinner is answers (every agent's latest) with the recorded winner's
// answer kept, just after its agent's newer one, when that agent's next
// answer landed after the end: the decision stands on the answer it
// chose, and a result whose winner is not among its answers contradicts
// itself. After, so that an agent's first answer listed is still its
// latest for the readers that look for that.
func keepWinner(answers []AnswerView, rec *TeamResult) []AnswerView {
	w := rec.Winner
	if w == nil || slices.ContainsFunc(answers, func(a AnswerView) bool { return a.AgentID == w.AgentID && a.Label == w.Label }) {
		return answers
	}
	i := slices.IndexFunc(rec.Answers, func(a AnswerView) bool { return a.AgentID == w.AgentID && a.Label == w.Label })
	if i < 0 {
		return answers
	}
	at := slices.IndexFunc(answers, func(a AnswerView) bool { return a.AgentID == w.AgentID })
	if at < 0 {
		at = len(answers) - 1
	}
	return slices.Insert(answers, at+1, rec.Answers[i])
}

// stale tells whether a recorded result lacks entries or spend the ledger
// has.
func stale(rec, now *TeamResult) bool {
	if rec.Steps != now.Steps || rec.Usage != now.Usage || (rec.CostUSD == nil) != (now.CostUSD == nil) {
		return true
	}
	return rec.CostUSD != nil && *rec.CostUSD != *now.CostUSD
}

// snapshot builds the team result as the ledger stands. A finished session
// returns its recorded result, refreshed with the latest usage; a cancelled
// one's duration stops at its cancel.
func (svc *Service) snapshot(s *Session, l *Ledger, st *State) *TeamResult {
	if r := st.Life.Finished; r != nil {
		return r.Clone() // the ledger's own result may be shared with the store
	}
	r := svc.baseResult(s, l, st, providers.Free())
	if d := st.Life.Decided; d != nil {
		r.Status = StatusDecided
		r.StopReason, r.HowChosen, r.Tie, r.Winner = clonePtr(d.StopReason), clonePtr(d.HowChosen), d.Tie, clonePtr(d.Winner)
		markAgreed(r, Deref(r.HowChosen)) // decided: only the final answer is pending
	} else {
		r.Status = st.Life.Status
	}
	for i := range r.Dropped {
		// A dropped agent's error recorded before its paths were
		// (hideRecordedPaths).
		r.Dropped[i].Message = svc.HidePaths(r.Dropped[i].Message)
	}
	if r.Status == StatusCancelled {
		r.CancelReason = svc.HidePaths(st.Life.CancelReason)
		if at := st.Life.CancelledAt; !at.IsZero() {
			// Stopped then, not counting on while it stands cancelled (a
			// resume counts again: running, its duration is its age). A
			// cancel whose time was not recorded (a foreign ledger) keeps
			// the age rather than a made-up 0.
			r.Duration = max(0, at.Sub(s.CreatedAt).Seconds())
		}
	}
	return r
}

// baseResult fills everything a result shows whatever the session's status.
func (svc *Service) baseResult(s *Session, l *Ledger, st *State, extra providers.Usage) *TeamResult {
	r := &TeamResult{
		SessionID:  s.ID,
		Status:     StatusRunning,
		Votes:      []VoteView{},
		Answers:    []AnswerView{},
		NextAgents: append([]string{}, st.Next...),
		Steps:      st.Steps,
		SessionDir: svc.sessionDir(s.ID),
		Agents:     []AgentUsage{},
		Dropped:    droppedAgents(s, st),

		WorkspaceTools: s.WorkspaceTools.String(),
	}
	r.Consensus = consensusView(s, st)
	for _, a := range st.Agents {
		ag, _ := s.Agent(a.ID)
		shown := providers.ShowSpec(ag.Model) // the spec keeps a team file's credentials; a result never does
		if v := a.LatestVote; v != nil {
			r.Votes = append(r.Votes, VoteView{Voter: a.ID, Target: v.Target, TargetLabel: v.TargetLabel, Reason: v.Reason, Stale: IsVoteStale(v, st.Latest)})
		}
		if ans := a.LatestAnswer; ans != nil {
			r.Answers = append(r.Answers, AnswerView{AgentID: a.ID, Label: ans.Label, Model: shown, Content: ans.Content})
		}
		u := agentSpend(l, a.ID)
		r.Agents = append(r.Agents, AgentUsage{AgentID: a.ID, Model: shown, Steps: a.Steps, Usage: usageView(u), CostUSD: u.CostUSD,
			CostEstimated: u.CostEstimated})
	}
	u := sessionUsage(l, extra)
	r.Usage, r.CostUSD, r.CostEstimated = usageView(u), u.CostUSD, u.CostEstimated
	r.BudgetEnforced = u.CostUSD != nil
	r.Duration = svc.opts.Now().Sub(s.CreatedAt).Seconds()
	return r
}

// consensusView is the tally of the standing votes, its leader, and whether
// the rule is met.
func consensusView(s *Session, st *State) ConsensusView {
	t := CountStanding(s, st)
	c := ConsensusView{Rule: s.Rules.Consensus, Tally: t.ByLabel}
	if s.Rules.Consensus == RuleWeighted {
		c.Weights = sessionWeights(s)
		c.WeightedTally = map[string]float64{}
		for _, g := range t.Groups {
			if w := st.Agent(g.Winner); w != nil && w.LatestAnswer != nil {
				c.WeightedTally[w.LatestAnswer.Label] = math.Round(g.Weight*1000) / 1000
			}
		}
	}
	if top := topGroups(s.Rules.Consensus, t.Groups); len(top) == 1 {
		if w := st.Agent(top[0].Winner); w != nil && w.LatestAnswer != nil {
			label := w.LatestAnswer.Label
			c.Leader = &label
		}
	}
	// Met, not reached: only the session's end on agreement is
	// (markAgreed); mid-run a later answer may make these votes stale.
	_, c.RuleMet = RuleMet(s.Rules.Consensus, t)
	return c
}

// markAgreed says, on a decided or finished result whose winner agreement
// chose (how), that consensus was reached, naming the winner as the
// leader, never another label.
func markAgreed(r *TeamResult, how string) {
	if !chosenByAgreement(r, how) {
		return
	}
	r.Consensus.Reached = true
	r.Consensus.Leader = &r.Winner.Label
}

// chosenByAgreement tells whether r's winner was chosen by agreement
// (how): what consensus.reached says.
func chosenByAgreement(r *TeamResult, how string) bool {
	return r.Winner != nil && (how == ChosenConsensus || how == ChosenEarlyAgreement || how == ChosenSingleAgent)
}

// finishedResult is the result of a session that has just been decided.
func (svc *Service) finishedResult(s *Session, l *Ledger, st *State, d Decision, extra providers.Usage) *TeamResult {
	r := svc.baseResult(s, l, st, extra)
	r.NextAgents = []string{}
	r.Status = StatusFinished
	stop, how := d.Stop, d.How
	r.StopReason = &stop
	r.Degraded = isDegraded(s, st)
	if d.Winner != "" && r.Degraded && s.Rules.Strict {
		// Strict: one model's answer is not what was asked for.
		d.Winner, stop = "", StopAgentsFailed
	}
	if d.Winner == "" {
		r.Status = StatusFailed
		return r
	}
	r.HowChosen, r.Tie = &how, d.Tie
	w := st.Agent(d.Winner)
	ag, _ := s.Agent(d.Winner)
	r.Winner = &Winner{AgentID: w.ID, Label: w.LatestAnswer.Label, Model: providers.ShowSpec(ag.Model)}
	final := w.LatestAnswer.Content
	r.FinalAnswer = &final
	svc.winnerFiles(s, st, r)
	markAgreed(r, how) // agreement (or the last agent left) chose the winner
	if how == ChosenForcedFirst {
		r.HowChosenNote = ForcedFirstNote
	} else if s.Rules.Consensus == RuleWeighted {
		r.HowChosenNote = weightedNote(s, st, how, d.Winner, stop)
	}
	r.NotAgreed = notAgreed(s, nil, r, how, stop)
	return r
}
