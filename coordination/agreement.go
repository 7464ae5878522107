package coordination

import (
	"fmt"
	"time"
)

// Agreed tells whether a finished result's winner was agreed on: chosen by
// its rule's votes (consensus, early_agreement), or the only agent a team of
// one had. A winner forced by a stop (budget, timeout, failures, split votes,
// max_rounds, finalize) was not, and the result says so (NotAgreed).
func Agreed(r *TeamResult) bool {
	return r.Winner != nil && r.NotAgreed == ""
}

// notAgreed is the sentence a finished result carries when its winner was
// not agreed on: why the run stopped, with the spend against the budget or
// the time against the timeout, and how the answer was taken — "stopped by
// budget after $0.98 of $1.00: agent_c's answer was taken first-come, without
// agreement". "" for an agreed winner.
func notAgreed(s *Session, r *TeamResult, how, stop string) string {
	if r.Winner == nil {
		return ""
	}
	var manner string
	switch how {
	case ChosenConsensus, ChosenEarlyAgreement:
		return ""
	case ChosenSingleAgent:
		if len(s.Agents)+len(s.Dropped) <= 1 {
			return "" // a team of one has nobody to agree with
		}
		manner = "as the last agent left"
	case ChosenForcedStanding:
		manner = "for having the most standing votes"
	case ChosenForcedCurrent:
		manner = "for having the most votes for current answers"
	default: // ChosenForcedFirst
		manner = "first-come"
	}
	return fmt.Sprintf("%s: %s's answer was taken %s, without agreement", stopCause(s, r, stop), r.Winner.AgentID, manner)
}

// stopCause words why a run stopped before its team agreed.
func stopCause(s *Session, r *TeamResult, stop string) string {
	rules := s.Rules
	switch stop {
	case StopBudget:
		tokens := r.Usage.Input + r.Usage.Output
		if rules.CostBudgetUSD != nil && (rules.TokenBudget == nil || tokens < *rules.TokenBudget) {
			spent := 0.0
			if r.CostUSD != nil {
				spent = *r.CostUSD
			}
			return fmt.Sprintf("stopped by budget after $%.2f of $%.2f", spent, *rules.CostBudgetUSD)
		}
		if rules.TokenBudget != nil {
			return fmt.Sprintf("stopped by the token budget after %d of %d tokens", tokens, *rules.TokenBudget)
		}
		return "stopped by budget"
	case StopTimeout:
		return fmt.Sprintf("stopped by the timeout after %s of %s", roundSeconds(r.Duration), roundSeconds(rules.TimeoutSeconds))
	case StopAgentsFailed:
		return fmt.Sprintf("stopped because agents failed (%s dropped)", Count(len(r.Dropped), "agent"))
	case StopSingleAgent:
		return fmt.Sprintf("stopped with one agent left (%s dropped)", Count(len(r.Dropped), "agent"))
	case StopSplitVote:
		return "stopped with the votes split"
	case StopMaxRounds:
		return fmt.Sprintf("stopped at max_rounds (%d)", rules.MaxRounds)
	case StopFinalized:
		return "finalized before the team agreed"
	}
	return "stopped by " + stop
}

// roundSeconds is a duration as people read it: "30m0s", "4.2s".
func roundSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
