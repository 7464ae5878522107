package coordination

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// DroppedAgent is an agent that left the team: before round 0 (its backend
// has no key, or refused the key) or after max_agent_failures failed steps in
// a row. Class is the error class of why (auth, not_found, missing_key, …).
type DroppedAgent struct {
	AgentID string `json:"agent_id"`
	Model   string `json:"model"`
	Class   string `json:"class"`
	Message string `json:"message"`
	// RetryAfterMS is the wait its provider asked for with the failure
	// that dropped it (Entry.RetryAfterMS), 0 for none.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

// ClassMissingKey is the class of an agent dropped because its backend has
// no key here.
const ClassMissingKey = "missing_key"

// droppedAgents lists the agents left out at creation, then those dropped by
// failures, in team order, each with its latest error.
func droppedAgents(s *Session, st *State) []DroppedAgent {
	out := make([]DroppedAgent, 0, len(s.Dropped))
	for _, d := range s.Dropped {
		// Kept without a base URL's credentials since they were masked at
		// creation (ShowSpec); one a session kept from before shows the
		// model, and its message names it, as it is shown now.
		if shown := providers.ShowSpec(d.Model); shown != d.Model {
			d.Message = strings.ReplaceAll(d.Message, d.Model, shown)
			d.Model = shown
		}
		out = append(out, d)
	}
	for _, a := range st.Agents {
		if !a.Dropped {
			continue
		}
		d := DroppedAgent{AgentID: a.ID, Model: s.modelOf(a.ID), Class: string(providers.ClassProvider)}
		for i := len(a.Entries) - 1; i >= 0; i-- {
			if e := a.Entries[i]; e.Kind == KindError {
				d.Class, d.Message, d.RetryAfterMS = string(e.Class), e.Message, e.RetryAfterMS
				break
			}
		}
		out = append(out, d)
	}
	return out
}

// teamSize is the team as asked for: the agents that run plus those left out
// at creation.
func teamSize(s *Session) int { return len(s.Agents) + len(s.Dropped) }

// answered counts the agents with at least one answer.
func answered(st *State) int {
	n := 0
	for _, a := range st.Agents {
		if a.LatestAnswer != nil {
			n++
		}
	}
	return n
}

// isDegraded tells whether a team of two or more has fewer than two agents
// that ever answered: its result is one model's answer, not a team's.
func isDegraded(s *Session, st *State) bool {
	return teamSize(s) >= 2 && answered(st) < 2
}

// Count says how many of a noun, in good grammar: "1 step", "3 steps".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if p, ok := irregular[noun]; ok {
		return fmt.Sprintf("%d %s", n, p)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

var irregular = map[string]string{"criterion": "criteria"}

func anyDropped(st *State) bool {
	for _, a := range st.Agents {
		if a.Dropped {
			return true
		}
	}
	return false
}
