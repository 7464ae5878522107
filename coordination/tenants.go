package coordination

import (
	"fmt"
	"regexp"
)

// DefaultTenant is the tenant of stdio, of the CLI and of a server with a
// single token: its sessions live in <state-dir>/sessions/<id>/, another
// tenant's in <state-dir>/tenants/<tenant>/sessions/<id>/.
const DefaultTenant = "default"

var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidTenant tells whether a name may name a tenant: 1-64 letters, digits,
// '_' or '-' (a store may make it a directory name).
func ValidTenant(name string) bool { return tenantPattern.MatchString(name) }

// Stores opens the store of each tenant, so that a server gives every tenant
// its own Service without widening any call with a tenant argument: one
// Store per tenant, the same one each time For is asked for it. The file
// store's (filestore.NewStores) keeps a tenant's sessions in its own
// directory, the memory store's one memory store per tenant; a database
// store would scope its rows.
type Stores interface {
	// For is the tenant's store; ErrBadInput for a name ValidTenant refuses.
	For(tenant string) (Store, error)
}

// CheckTenant refuses a tenant name ValidTenant does not accept, for a
// Stores implementation to call first.
func CheckTenant(tenant string) error {
	if !ValidTenant(tenant) {
		return fmt.Errorf("%w: tenant %q must be 1-64 letters, digits, '_' or '-'", ErrBadInput, tenant)
	}
	return nil
}
