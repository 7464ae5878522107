package coordination

import (
	"math"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// DecisionKind is what deciding a settled (or forced) session produces.
type DecisionKind int

const (
	DecideNothing DecisionKind = iota // keep going
	DecideRevote                      // ask the voters once more
	DecideFinish                      // a winner (or a failure) is final
)

// Decision is the outcome of Decide.
type Decision struct {
	Kind   DecisionKind
	Revote []string // DecideRevote: who is asked
	Winner string   // DecideFinish: the winning agent; "" if the session failed
	How    string   // how_chosen
	Stop   StopReason
	Tie    bool
}

// Decide applies the termination rules of docs/DESIGN.md,
// "Round 0, the denominator, deciding", to a derived state. force, if
// not empty, is a stop reason (timeout, budget, finalized) that ends the
// session now whatever its state. Decide is pure: the caller records what it
// returns.
func Decide(s *Session, st *State, force StopReason) Decision {
	if st.Life.Status != StatusRunning {
		return Decision{}
	}
	if s.Rules.Strict && anyDropped(st) {
		return Decision{Kind: DecideFinish, Stop: StopAgentsFailed} // strict: a smaller team is a failure
	}
	draw := st.Steps
	if force != "" {
		if w, ok := RuleMet(s.Rules.Consensus, CountStanding(s, st)); ok {
			return Decision{Kind: DecideFinish, Winner: w, How: ChosenConsensus, Stop: force}
		}
		w, how, tie := forced(s, st, draw)
		return Decision{Kind: DecideFinish, Winner: w, How: how, Stop: force, Tie: tie}
	}

	live := st.Live()
	switch len(live) {
	case 0:
		if first := firstAnswerer(st); first != nil {
			return Decision{Kind: DecideFinish, Winner: first.ID, How: ChosenForcedFirst, Stop: StopAgentsFailed}
		}
		return Decision{Kind: DecideFinish, Stop: StopAgentsFailed}
	case 1:
		// The survivor's own standing vote decides first (counted below, it
		// is a majority of one); only a survivor without one wins by being
		// the last agent left.
		if a := live[0]; a.LatestAnswer != nil && !a.InFlight && a.StandingVote == nil {
			return Decision{Kind: DecideFinish, Winner: a.ID, How: ChosenSingleAgent, Stop: StopSingleAgent}
		}
	}

	if d, ok := earlyAgreement(s, st, live); ok {
		return d
	}
	if d, ok := dominantStop(s, st, live); ok {
		return d
	}
	if !st.Settled {
		return Decision{}
	}

	t := CountStanding(s, st)
	if w, ok := RuleMet(s.Rules.Consensus, t); ok {
		return Decision{Kind: DecideFinish, Winner: w, How: ChosenConsensus, Stop: StopConsensus}
	}
	// Under consensus weighted only an exact tie of weights fails the rule;
	// a re-vote would cost a round to break what a draw breaks as well.
	if st.Life.Revote == nil && s.Rules.Consensus != RuleWeighted {
		var ask []string
		for _, a := range live {
			if !a.Capped && a.StandingVote != nil {
				ask = append(ask, a.ID)
			}
		}
		if len(ask) > 0 {
			return Decision{Kind: DecideRevote, Revote: ask}
		}
	}
	stop := StopSplitVote
	for _, a := range live {
		if a.Capped && a.StandingVote == nil {
			stop = StopMaxRounds
		}
	}
	w, how, tie := forced(s, st, draw)
	if w == "" {
		return Decision{Kind: DecideFinish, Stop: StopAgentsFailed}
	}
	return Decision{Kind: DecideFinish, Winner: w, How: how, Stop: stop, Tie: tie}
}

// SPRTLead is the lead in summed weights (log-likelihood ratios) at which
// consensus weighted stops after round 0: odds of 19 to 1 for the leading
// value against the next, Wald's bound for a 5 % error.
var SPRTLead = math.Log(19)

// WeightedLead is, under consensus weighted, the leading value's group and
// how far its weight is ahead of the next value's (all of it when no other
// value has ballots); ok is false when there are no ballots or the lead is
// shared.
func WeightedLead(s *Session, st *State) (lead float64, top Group, ok bool) {
	groups := CountStanding(s, st).Groups
	leading := topGroups(RuleWeighted, groups)
	if len(leading) != 1 {
		return 0, Group{}, false
	}
	top = leading[0]
	second := 0.0
	for _, g := range groups {
		if g.Key != top.Key {
			second = max(second, g.Weight)
		}
	}
	return top.Weight - second, top, true
}

// earlyAgreement ends a short-answer session right after round 0 when a
// strict majority of the live agents' first answers share a final value;
// under consensus weighted, when the leading value's weight is SPRTLead
// ahead of the next and at least two agents hold it (the guard: one agent's
// word, however heavy, is not agreement — a stop rule needs evidence that
// the team agrees, not only that one member is usually right).
func earlyAgreement(s *Session, st *State, live []*AgentState) (Decision, bool) {
	if !s.Rules.EarlyStop || !s.Rules.short() || st.Life.Revote != nil || len(live) == 0 {
		return Decision{}, false
	}
	for _, a := range st.Agents {
		if a.LatestDecision != nil && (a.LatestDecision.Kind == KindVote || a.Answers > 1) {
			return Decision{}, false // past round 0: the chance is gone
		}
	}
	if s.Rules.Consensus == RuleWeighted {
		for _, a := range live {
			if a.LatestAnswer == nil {
				return Decision{}, false
			}
		}
		lead, top, ok := WeightedLead(s, st)
		if ok && lead >= SPRTLead && top.Votes >= 2 {
			return Decision{Kind: DecideFinish, Winner: top.Winner, How: ChosenEarlyAgreement, Stop: StopEarlyAgreement}, true
		}
		return Decision{}, false
	}
	count := map[string]int{}
	first := map[string]*AgentState{}
	for _, a := range byAnonOrder(live) {
		if a.LatestAnswer == nil {
			return Decision{}, false
		}
		v := finalvalue.Of(a.LatestAnswer.Content)
		if v == "" {
			continue // no value agrees with anything (as in Unanimous)
		}
		count[v]++
		if first[v] == nil {
			first[v] = a
		}
	}
	for v, n := range count {
		if 2*n > len(live) {
			return Decision{Kind: DecideFinish, Winner: first[v].ID, How: ChosenEarlyAgreement, Stop: StopEarlyAgreement}, true
		}
	}
	return Decision{}, false
}
