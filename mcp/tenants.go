package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// DefaultTenant is the tenant of stdio, of MASSGEN_MCP_TOKEN and of an HTTP
// server without tokens. Its sessions live in <state-dir>/sessions/<id>/.
const DefaultTenant = coordination.DefaultTenant

// ValidTenant tells whether a name may name a tenant: 1-64 letters, digits,
// '_' or '-' (it becomes a directory name).
func ValidTenant(name string) bool { return coordination.ValidTenant(name) }

// TenantServices opens the coordination service of a tenant: one per tenant,
// each over its own store and its own circuit breakers, so that a tenant's
// listing, status, resources, steps and results hold only its own sessions —
// another tenant's session is simply not found.
//
// Tenant names reach it already checked (ValidTenant): they come from the
// tokens file, never from a client. An error (a store that cannot be
// opened) refuses the tenant's request at the transport, before any tool
// runs; the next request tries again.
type TenantServices func(tenant string) (*coordination.Service, error)

// tenants keeps the services opened so far.
type tenants struct {
	open TenantServices // nil: every tenant is the default one (tests, single-tenant use)
	def  *coordination.Service

	mu      sync.Mutex
	byID    map[string]*coordination.Service
	opened  func(*coordination.Service) // told of each tenant's service as it opens (metrics)
	stopped bool                        // cancelAll has begun: no service opens, so none escapes the stop
}

func newTenants(def *coordination.Service, open TenantServices) *tenants {
	return &tenants{open: open, def: def, byID: map[string]*coordination.Service{DefaultTenant: def}}
}

// service is the tenant's service, opened on first use. A failed open is
// not kept, so the next request tries again.
func (t *tenants) service(tenant string) (*coordination.Service, error) {
	if tenant == "" || tenant == DefaultTenant || t.open == nil {
		return t.def, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if svc, ok := t.byID[tenant]; ok {
		return svc, nil
	}
	if t.stopped {
		return nil, coordination.ErrShuttingDown
	}
	svc, err := t.open(tenant)
	if err != nil {
		return nil, fmt.Errorf("could not open the sessions of tenant %q: %w", tenant, err)
	}
	t.byID[tenant] = svc
	if t.opened != nil {
		t.opened(svc)
	}
	return svc, nil
}

// requestService is the tenant's service for an HTTP request: the guards'
// (openTenant) and a surface's own login's (TenantContext). A store that
// cannot be opened is logged whole here, and the client is told a fixed
// sentence: the open's error names the server's paths (the state
// directory, the tenant's directory under it), which are the operator's.
func (s *Server) requestService(tenant string) (*coordination.Service, error) {
	svc, err := s.handler.tenants.service(tenant)
	if err == nil || errors.Is(err, coordination.ErrShuttingDown) {
		return svc, err
	}
	s.handler.log.Error().Err(err).Str("tenant", tenant).Msg("could not open a tenant's service")
	return nil, fmt.Errorf("the sessions of tenant %q could not be opened on the server; the operator's log has the details, and the next request tries again", tenant)
}

// all lists every service opened so far.
func (t *tenants) all() []*coordination.Service {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*coordination.Service, 0, len(t.byID))
	for _, svc := range t.byID {
		out = append(out, svc)
	}
	return out
}

// cancelAll shuts every tenant's service down (the server is stopping):
// their runs are cancelled all at once, so that one tenant's slow stop
// keeps no other's runs going, and no run starts from then on. ctx bounds
// the stop: each service's Shutdown stops what is left when it ends (the
// runs go on as far as they get; failed claims being taken back stop).
func (t *tenants) cancelAll(ctx context.Context) {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	var stopping sync.WaitGroup
	for _, svc := range t.all() {
		stopping.Go(func() { _ = svc.Shutdown(ctx) })
	}
	stopping.Wait()
}

type tenantKey struct{}

// withTenant marks a request as the tenant's.
func withTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// tenantOf is the request's tenant; DefaultTenant when none was marked
// (stdio, in-process clients).
func tenantOf(ctx context.Context) string {
	if t, ok := ctx.Value(tenantKey{}).(string); ok && t != "" {
		return t
	}
	return DefaultTenant
}

type serviceKey struct{}

// withService hands a request's tenant service, opened by the transport, to
// the tools.
func withService(ctx context.Context, svc *coordination.Service) context.Context {
	return context.WithValue(ctx, serviceKey{}, svc)
}

// svc is the coordination service of the request's tenant: the one the
// transport opened for it, else (stdio, in-process clients) the tenant's
// as marked on the context, the default when none is.
func (h *handler) svc(ctx context.Context) *coordination.Service {
	if svc, ok := ctx.Value(serviceKey{}).(*coordination.Service); ok {
		return svc
	}
	svc, err := h.tenants.service(tenantOf(ctx))
	if err != nil {
		// Unreachable over HTTP, whose transport opens the service of every
		// tenant it lets through (openTenant); never another tenant's.
		panic(err)
	}
	return svc
}
