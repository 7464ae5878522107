package coordination

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// What people read names an agent one way everywhere: its id and model,
// then the label its answer had, in brackets — "agent_c
// (gemini-2.5-flash) answered [agent2.1]". Ids and models are stable across
// runs; labels are drawn per session, so they only ever follow.

// shortModel is how a model reads beside an agent id: the model name
// without its backend ("gemini-2.5-flash"), whole for the sim and the host,
// whose names say little alone ("sim/strong").
func shortModel(spec string) string {
	sp, err := providers.ParseSpec(spec)
	if err != nil || sp.Model == "" || sp.Backend == "sim" || sp.Backend == "host" || sp.Backend == "human" {
		return providers.ShowSpec(spec)
	}
	return sp.Model
}

// Who is "agent_c (gemini-2.5-flash)": how every line names an agent.
func Who(id, model string) string {
	if model == "" {
		return id
	}
	return fmt.Sprintf("%s (%s)", id, shortModel(model))
}

// Bracket is "[agent2.1]", or "" for no label.
func Bracket(label string) string {
	if label == "" {
		return ""
	}
	return "[" + label + "]"
}

// votesFor finds the agent a voter's latest vote in st is for and counts the
// standing votes for it that counted says had landed by the time that vote
// did. Steps land concurrently, and their results reach the loop in any
// order, so the state a landing derives may already hold a vote that landed
// just after it (a line that says "2 of 3" for the first vote would be
// wrong), or may lack one whose result the loop reported first (two lines
// would say "1 of 3"). So the count is taken from newest, the newest state
// the loop has seen, when this vote still stands there; st otherwise.
func votesFor(st, newest *State, voter string, counted func(sv, v *Entry) bool) (target string, n int) {
	me := st.Agent(voter)
	if me == nil || me.LatestVote == nil {
		return "", 0
	}
	v := me.LatestVote
	if newest != nil {
		// Only while the vote still stands there: a newer answer may have
		// made it stale meanwhile, and its line would read "0 of 3".
		if a := newest.Agent(voter); a != nil && a.StandingVote != nil && a.StandingVote.Step == v.Step {
			st = newest
		}
	}
	for _, a := range st.Agents {
		if sv := a.StandingVote; sv != nil && !a.Dropped && sv.Target == v.Target && (a.ID == voter || counted(sv, v)) {
			n++
		}
	}
	return v.Target, n
}

// Line is a landed step as people read it: "agent_c (gemini-2.5-flash)
// answered [agent2.1]", "… voted for agent_a [agent1.2]", "… failed
// (rate_limit): …".
func (r *StepResult) Line() string {
	me := Who(r.AgentID, r.model)
	switch r.Action {
	case "new_answer":
		return me + " answered " + Bracket(r.Label)
	case "vote":
		line := me + " voted for " + strings.TrimSpace(r.Target+" "+Bracket(r.TargetLabel))
		if r.Stale {
			line += "; the vote is already stale (a newer answer landed meanwhile)"
		}
		return line
	}
	return fmt.Sprintf("%s failed (%s): %s", me, r.ErrorClass, Reason(r.Message, ReasonRunes))
}
