package coordination

import (
	"context"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// A step taken over from a try whose process died mid-step has what that
// try left of max_tool_calls_per_step, as it has of step_timeout_seconds
// (stepClaim.before): before, a replica SIGKILLed after 39 of a step's 40
// calls left the step 40 more on the replica that took it up, and a
// crash loop any number. The dead try's tool records died with it (a
// step's records are kept when it lands), but each of its calls was
// decided, before it ran, by the step's guard, whose decision the
// permission log keeps durably with the agent and the step's number
// (permissions.go): those are its calls. The step's number makes the
// count exact where the lease's time is not: a try that landed an
// earlier step left no decision under this one.

// callsBefore is how many tool calls earlier tries of agent's step, on
// processes that died, made: the permission log's decisions of the step's
// calls, when claim took the step over from such a try (a claim over an
// unreleased lease: CarriedFrom, which a try that died before its first
// renewal also leaves, carrying no time); 0 otherwise, and for a store
// that keeps no permission log. A log that
// cannot be read is logged and counts 0: the step runs with its whole
// limit, as before the carry.
func (svc *Service) callsBefore(ctx context.Context, id, agent string, step int, claim *stepClaim) int {
	if claim == nil || claim.triedFrom.IsZero() {
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
		if r.Agent == agent && r.Step == step && countsAsToolCall(r) {
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
