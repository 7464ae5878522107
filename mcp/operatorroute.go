package mcp

import (
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// operatorOnly lets only the default tenant through: the operator's
// MASSGEN_MCP_TOKEN, or a tokens file's line for the tenant "default".
// /metrics counts every tenant's runs, steps and errors, so a tenant's
// token reading it would see when, and how much, the others run. Without a
// tokens file every request is the default tenant's, and this changes
// nothing.
func operatorOnly(refuse refuser, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tenantOf(r.Context()) != DefaultTenant {
			refuse(w, http.StatusForbidden, mcpgo.INVALID_REQUEST,
				`/metrics covers every tenant, so it answers only the operator's token (MASSGEN_MCP_TOKEN, or the tokens file's "default" tenant); a tenant's token reads its own sessions through /mcp`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
