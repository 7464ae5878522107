package coordination

import (
	"context"
	"fmt"
	"strings"
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
// waiting names the agents whose steps were still out when the stop was
// decided (a timeout names them).
func notAgreed(s *Session, waiting []string, r *TeamResult, how string, stop StopReason) string {
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
	return fmt.Sprintf("%s: %s's answer was taken %s, without agreement", stopCause(s, waiting, r, stop), r.Winner.AgentID, manner)
}

// stopCause words why a run stopped before its team agreed.
func stopCause(s *Session, waiting []string, r *TeamResult, stop StopReason) string {
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
		// A run's timeout binds the time the session's runs ran
		// (RanBefore included), a step-driven session's its age: either
		// way a timeout stop has used the timeout, and a run's session can
		// be much older (started late, or resumed after an interruption),
		// so its age is not the figure.
		cause := fmt.Sprintf("stopped by the timeout after %s of %s", roundSeconds(min(r.Duration, rules.TimeoutSeconds)), roundSeconds(rules.TimeoutSeconds))
		// Whoever was still working when time ran out is who stalled the
		// team: named, or nothing would say which provider it was.
		if len(waiting) > 0 {
			cause += " waiting on " + strings.Join(waiting, ", ")
		}
		return cause
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
	return "stopped by " + string(stop)
}

// roundSeconds is a duration as people read it: "30m0s", "4.2s".
func roundSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// waitingKey carries, to the settle that records a run's timeout, the agents
// whose steps the run was still waiting for: the loop cancels and drains
// them first, so no lock shows them by then.
type waitingKey struct{}

func withWaiting(ctx context.Context, s *Session, agents map[string]bool) context.Context {
	var names []string
	for _, id := range s.AgentIDs() {
		if agents[id] {
			names = append(names, Who(id, s.modelOf(id)))
		}
	}
	return context.WithValue(ctx, waitingKey{}, names)
}

// stillWorking names the agents a timeout caught working, as lines name
// them: those the run was waiting for, else those whose step locks are held
// (a step-driven session's host or server steps).
func (svc *Service) stillWorking(ctx context.Context, s *Session) []string {
	if names, ok := ctx.Value(waitingKey{}).([]string); ok {
		return names
	}
	inFlight, err := svc.store.InFlight(ctx, s.ID)
	if err != nil {
		return nil // the note loses a detail; the stop stands
	}
	return withWaiting(ctx, s, inFlight).Value(waitingKey{}).([]string)
}
