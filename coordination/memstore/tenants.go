package memstore

import (
	"sync"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Stores keeps one memory store per tenant.
type Stores struct {
	mu       sync.Mutex
	byTenant map[string]*Store
}

// NewStores returns the tenants' memory stores, none opened yet.
func NewStores() *Stores { return &Stores{byTenant: map[string]*Store{}} }

// For is the tenant's store, made on first use.
func (s *Stores) For(tenant string) (coordination.Store, error) {
	if err := coordination.CheckTenant(tenant); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byTenant[tenant]
	if !ok {
		st = New()
		s.byTenant[tenant] = st
	}
	return st, nil
}
