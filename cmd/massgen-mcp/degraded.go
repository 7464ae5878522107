package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// degradedMessage says why a degraded run exits 3, pointing only at what was
// printed: the Dropped lines when every agent that never answered was
// dropped, else the agents by name and the status command that shows why
// (an agent can fail without reaching max_agent_failures, or only vote),
// with the store's flags (storeAt.flags) so that it pastes.
func degradedMessage(res *coordination.TeamResult, flags string) string {
	answered := map[string]bool{}
	for _, a := range res.Answers {
		answered[a.AgentID] = true
	}
	dropped := map[string]bool{}
	var never []string
	for _, d := range res.Dropped {
		dropped[d.AgentID] = true
		if !answered[d.AgentID] {
			never = append(never, d.AgentID)
		}
	}
	for _, a := range res.Agents {
		if !answered[a.AgentID] && !dropped[a.AgentID] {
			never = append(never, a.AgentID)
		}
	}
	slices.Sort(never)
	msg := fmt.Sprintf("degraded: only %s of a team of %d answered", coordination.Count(len(answered), "agent"), len(answered)+len(never))
	undropped := slices.ContainsFunc(never, func(id string) bool { return !dropped[id] })
	switch {
	case len(never) == 0:
	case !undropped:
		msg += " (the Dropped lines above say why)"
	default:
		msg += fmt.Sprintf("; %s never did (massgen-mcp status%s %s shows why)", strings.Join(never, ", "), flags, res.SessionID)
	}
	return msg + "; --strict fails such runs"
}
