package mcp

import (
	"context"
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
// tokens file, never from a client.
type TenantServices func(tenant string) *coordination.Service

// tenants keeps the services opened so far.
type tenants struct {
	open TenantServices // nil: every tenant is the default one (tests, single-tenant use)
	def  *coordination.Service

	mu     sync.Mutex
	byID   map[string]*coordination.Service
	opened func(*coordination.Service) // told of each tenant's service as it opens (metrics)
}

func newTenants(def *coordination.Service, open TenantServices) *tenants {
	return &tenants{open: open, def: def, byID: map[string]*coordination.Service{DefaultTenant: def}}
}

// service is the tenant's service, opened on first use.
func (t *tenants) service(tenant string) *coordination.Service {
	if tenant == "" || tenant == DefaultTenant || t.open == nil {
		return t.def
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if svc, ok := t.byID[tenant]; ok {
		return svc
	}
	svc := t.open(tenant)
	t.byID[tenant] = svc
	if t.opened != nil {
		t.opened(svc)
	}
	return svc
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

// cancelAll cancels every run of every tenant (the server is stopping).
func (t *tenants) cancelAll() {
	for _, svc := range t.all() {
		svc.CancelAll()
	}
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

// service is the coordination service of the request's tenant.
func (h *handler) svc(ctx context.Context) *coordination.Service {
	return h.tenants.service(tenantOf(ctx))
}
