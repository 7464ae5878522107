package backends

import (
	"context"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// Report is Usable and DefaultTeamWhy from one snapshot of the environment
// and .env files (a Config with an Env keeps its own).
func (c Config) Report(ctx context.Context) providers.BackendReport {
	env := c.env()
	c.Env = func() *keys.Env { return env }
	rep := providers.BackendReport{Backends: c.Usable(ctx), Problems: env.Problems(), Sandbox: Sandbox()}
	rep.DefaultTeam, rep.DefaultTeamWhy, rep.DefaultTeamErr = c.DefaultTeamWhy()
	return rep
}
