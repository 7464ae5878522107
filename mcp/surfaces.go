package mcp

import (
	"context"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// What another surface served beside /mcp (HTTPOptions.Surfaces) asks of
// this server: the request's tenant, a team the operator allows, a run slot.
// The methods take and return only coordination's types, so such a surface
// depends on coordination, never on mcp, and the binary wires the two.

// RequestService is the coordination service of an HTTP request's tenant,
// which the guards in front of a surface opened before its handler runs.
func (s *Server) RequestService(ctx context.Context) *coordination.Service {
	return s.handler.svc(ctx)
}

// TeamSpec builds a new session's team, the way run_team builds one: team
// "" is the default team (the models Options.DefaultTeam names when the
// session is created), else the operator's team file of that name under
// --teams-dir, its agents, context and rules; the task and text context go
// under the same caps as run_team's. A surface passes nothing operator-only
// of its own — no models, directories or base URLs — so the operator-only
// rule holds as it does for /mcp.
func (s *Server) TeamSpec(team, task string, context []string) (coordination.TeamSpec, error) {
	t := TeamSettings{Team: team, Task: task}
	for _, c := range context {
		t.Context = append(t.Context, contextArg{Text: c})
	}
	return s.handler.spec(t, coordination.DriverRun)
}

// TeamNames lists the usable team files under --teams-dir (a file with a
// problem is left out: naming it could only fail).
func (s *Server) TeamNames() []string {
	var names []string
	for _, t := range s.handler.teams() {
		if t.Problem == "" {
			names = append(names, t.Name)
		}
	}
	return names
}

// TeamProblem says why the team file name cannot be used, its paths
// relative to --teams-dir as list_backends shows them; "" when it can be
// used or there is none.
func (s *Server) TeamProblem(name string) string {
	for _, t := range s.handler.teams() {
		if t.Name == name {
			return t.Problem
		}
	}
	return ""
}

// AcquireRun takes a run slot of the request's tenant under --max-runs and
// --max-runs-per-tenant, refusing at once at a cap (the error says which);
// release gives it back, once, when the run has ended.
func (s *Server) AcquireRun(ctx context.Context) (release func(), err error) {
	return s.handler.runs.acquire(tenantOf(ctx))
}

// RunSlot takes the tenant's run slots as AcquireRun does, for the runs
// the server starts on its own (interrupted sessions it resumes), which
// count against --max-runs and --max-runs-per-tenant as a client's do.
func (s *Server) RunSlot(tenant string) coordination.RunSlot {
	return func(context.Context) (func(), error) { return s.handler.runs.acquire(tenant) }
}

// TenantContext is ctx marked as the tenant's, with its service opened, as
// the guards mark a request that carried the tenant's token: for a surface
// with its own login (Surface.OwnLogin), after it has logged the request
// in. The tenant must come from the server's tokens (TokenTenant), never
// from a client. Its error may be shown to the client as it is: a store
// that cannot be opened is logged here and said in a fixed sentence.
func (s *Server) TenantContext(ctx context.Context, tenant string) (context.Context, error) {
	svc, err := s.requestService(tenant)
	if err != nil {
		return nil, err
	}
	// The calls the guards marked pending are the tenant's now.
	if err := chargePending(ctx, tenant); err != nil {
		return nil, err
	}
	return withService(withTenant(ctx, tenant), svc), nil
}

// CancelTeam stops a session of the request's tenant as cancel_team does:
// its detached calls, then its run.
func (s *Server) CancelTeam(ctx context.Context, id string) (*coordination.TeamResult, error) {
	s.handler.flights.cancelSession(tenantOf(ctx), id)
	return s.handler.svc(ctx).Cancel(ctx, id)
}
