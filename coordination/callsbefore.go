package coordination

import (
	"context"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// A step taken over from earlier tries that did not land (a process that
// died mid-step, a try given up in an outage) has what they left of
// max_tool_calls_per_step, as it has of step_timeout_seconds
// (stepClaim.before): before, a replica SIGKILLed after 39 of a step's 40
// calls left the step 40 more on the replica that took it up, and a crash
// loop any number. Those tries' tool records died with them (a step's are
// kept when it lands), but each of their calls was decided, before it
// ran, by the step's guard, whose decision the permission log keeps
// durably with the agent, the step's number and the claim's version of
// the step lease (permissions.go), or, when a CLI ran it without asking
// (Claude Code's reads), noted there as its stream reported it
// (cliagent.UnaskedCalls): those are their calls. The step's
// number leaves out a try that landed an earlier step; the version, a run
// of the same step number released before this run of claims began (a
// cancelled call, which a step run again does not count, as it does not
// count its time).

// callsBefore is how many tool calls earlier tries of agent's step made
// under the claims of claim's run of claims (RunLease.ChainFrom up to its
// own version): the permission log's decisions of the step's calls under
// those versions; 0 for a claim that began its run (one after a release),
// a nil claim, and a store that keeps no permission log. A log that
// cannot be read is logged and counts 0: the step runs with its whole
// limit, as before the carry. One read a takeover; none on a step that
// took nothing over.
func (svc *Service) callsBefore(ctx context.Context, id, agent string, step int, claim *stepClaim) int {
	if claim == nil || claim.chainFrom == 0 || claim.chainFrom >= claim.version {
		return 0
	}
	log, ok := svc.store.(PermissionLog)
	if !ok {
		return 0
	}
	recs, err := log.Permissions(ctx, id)
	if err != nil {
		svc.log.Warn().Err(err).Str("session", id).Str("agent", agent).Int("step", step).
			Msg("could not read the permission log for the tool calls of the step's earlier tries; the step has its whole max_tool_calls_per_step")
		return 0
	}
	n := 0
	for _, r := range recs {
		if r.Agent == agent && r.Step == step && r.Lease >= claim.chainFrom && r.Lease < claim.version && countsAsToolCall(r) {
			n++
		}
	}
	return n
}

// countsAsToolCall says whether a decision was of a call the step's limit
// counts: a call, refused or not (an API loop and a CLI's limits count
// both), but not a web search, which neither counts, nor a CLI's run
// settings noted before any call.
func countsAsToolCall(r permissions.Record) bool {
	return r.IsCall() && !(r.Action.Kind == permissions.Net && r.Action.Target == permissions.WebSearch)
}
