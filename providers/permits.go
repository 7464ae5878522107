package providers

import (
	"context"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// Permits is the agent's permission engine as one step sees it: its rules,
// the one decision per call (with its approval and audit line) and the
// audit of decisions made up front. Coordination implements it; a provider
// that runs a coding-agent CLI asks it for each call the CLI lets it see
// and notes the CLI's coarse mode once per step.
type Permits interface {
	// Rules are the agent's rules (the floor is applied whatever they say).
	Rules() permissions.Rules
	// Check decides one call the agent is about to make, asking for
	// approval when the rules ask, and writes its audit line: ran says
	// whether the call may go ahead, why (when it may not) is the refusal
	// the model is shown.
	Check(ctx context.Context, tool string, actions []permissions.Action) (ran bool, why string)
	// Note writes to the audit one decision not put to Check: a CLI's run
	// settings (its coarse mode), noted before any call, or a call its CLI
	// ran without asking; the time, agent and step are filled in.
	Note(rec permissions.Record)
}
