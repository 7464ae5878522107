package coordination

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// Dominant is, under consensus weighted, the live agent whose weight is
// more than every other live agent's together, with its weight and the
// others' sum; ok is false when no agent outweighs the rest. With such an
// agent no ballots of the others — answers and votes alike — can outweigh
// its own answer and vote, so only changing its mind can change the winner.
func Dominant(s *Session, live []*AgentState) (id string, weight, others float64, ok bool) {
	total := 0.0
	for _, a := range live {
		total += s.Rules.weight(a.ID)
	}
	for _, a := range live {
		if w := s.Rules.weight(a.ID); w > total-w+weightTie {
			return a.ID, w, total - w, true
		}
	}
	return "", 0, 0, false
}

// dominantStop ends a session under consensus weighted with dominant_stop
// right after round 0 when one agent outweighs all the others together
// (Dominant), or when every live agent gave the same value and none may
// answer again (Unanimous): the weighted vote of the first answers is
// final. The vote round it skips could move the outcome only by talking the
// heavy agent out of its answer, which on the GSM8K replay, one strong
// model among weak ones, it did more often from right to wrong than the
// reverse (docs/BENCHMARKS.md) — or, for a unanimous team, not at all:
// votes go to answers, and every answer holds the one value.
func dominantStop(s *Session, st *State, live []*AgentState) (Decision, bool) {
	if dominantReason(s, st, live) == "" {
		return Decision{}, false
	}
	w, ok := RuleMet(s.Rules.Consensus, CountStanding(s, st))
	if !ok {
		return Decision{}, false // an exact tie of weights: the rounds go on
	}
	return Decision{Kind: DecideFinish, Winner: w, How: ChosenConsensus, Stop: StopConsensus}, true
}

// dominantReason says why dominant_stop ends round 0 now, or "" when it
// does not. dominantStop and the result's note both read it, so the note
// cannot credit the stop for a run a timeout, a budget or an ordinary
// round-0 win ended.
func dominantReason(s *Session, st *State, live []*AgentState) string {
	if !s.Rules.DominantStop || s.Rules.Consensus != RuleWeighted || st.Life.Revote != nil || len(live) < 2 {
		return ""
	}
	if !round0Done(st, live) || !roundToSkip(live) {
		return ""
	}
	if id, w, others, ok := Dominant(s, live); ok {
		return fmt.Sprintf("%s's weight %.2f is more than the other agents' %.2f together, so no vote could outweigh it", id, w, others)
	}
	v := Unanimous(s, live)
	if v == "" {
		return ""
	}
	who := "every agent"
	if len(live) < len(st.Agents) {
		who = fmt.Sprintf("every remaining agent (%d of %d)", len(live), len(st.Agents))
	}
	return fmt.Sprintf("%s answered %s and none may answer again, so no vote could change it", who, v)
}

// round0Done tells whether every live agent has given its first answer and
// nobody has voted or answered again: the moment round-0 stops are read.
func round0Done(st *State, live []*AgentState) bool {
	for _, a := range st.Agents {
		if a.LatestDecision != nil && (a.LatestDecision.Kind == KindVote || a.Answers > 1) {
			return false
		}
	}
	for _, a := range live {
		if a.LatestAnswer == nil {
			return false
		}
	}
	return true
}

// Unanimous is the one final value every live agent's latest answer holds
// when none of them may answer again (max_answers_per_agent or its steps
// used up), or "" otherwise. A vote round can then only vote for that value.
// An answer with no final value ("...") agrees with nothing, as in the
// reliability fit.
func Unanimous(s *Session, live []*AgentState) string {
	value := ""
	for i, a := range live {
		if a.LatestAnswer == nil || !(a.Capped || a.answerCapped(s.Rules)) {
			return ""
		}
		v := finalvalue.Of(a.LatestAnswer.Content)
		if v == "" || (i > 0 && v != value) {
			return ""
		}
		value = v
	}
	return value
}

// roundToSkip tells whether a live agent still has a step left after round
// 0: only then is there a vote round for dominant_stop to skip. When every
// live agent has used its steps (max_rounds 1) round 0 ends the run anyway,
// and an ordinary round-0 win must not be credited to dominant_stop.
func roundToSkip(live []*AgentState) bool {
	for _, a := range live {
		if !a.Capped {
			return true
		}
	}
	return false
}

// dominantNote says why round 0 ended the run under dominant_stop, and only
// when it did: a consensus stop with dominantReason true of the state.
func dominantNote(s *Session, st *State, stop StopReason) string {
	if stop != StopConsensus {
		return ""
	}
	if why := dominantReason(s, st, st.Live()); why != "" {
		return "; round 0 ended the run (dominant_stop): " + why
	}
	return ""
}
