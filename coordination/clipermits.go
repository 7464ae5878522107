package coordination

import (
	"context"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// A step's guard is also providers.Permits: a coding-agent CLI runs its
// own tools (its shell, its edits), and its provider puts each call its CLI
// lets it see to the same decision point as the toolbox's calls, and notes
// the CLI's run settings (its coarse mode) once per step (docs/DESIGN.md,
// "CLI agents and the permission engine").
var _ providers.Permits = (*guard)(nil)

// Rules implements providers.Permits.
func (g *guard) Rules() permissions.Rules { return g.rules }

// Check implements providers.Permits: the decision, its ask answered, and
// its audit line; a refusal is the sentence the model reads.
func (g *guard) Check(ctx context.Context, tool string, actions []permissions.Action) (bool, string) {
	rec, d := g.decide(ctx, tool, actions)
	if rec.Outcome.Ran() {
		return true, ""
	}
	why := ""
	if rec.By != "" {
		why = "; asked, answered no by " + rec.By
	}
	return false, d.Refusal(why)
}

// Note implements providers.Permits: a decision made before any call.
func (g *guard) Note(rec permissions.Record) {
	rec.Time, rec.Agent, rec.Step, rec.Lease = g.svc.now(), g.agent, g.step, g.lease
	g.svc.audit(context.Background(), g.session, rec)
}
