package filestore

import (
	"path/filepath"
	"sync"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/tenantdir"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// Stores opens each tenant's file store under one state directory: the
// default tenant's sessions in <state-dir>/sessions/<id>/, another tenant's
// in <state-dir>/tenants/<tenant>/sessions/<id>/ (docs/DESIGN.md, "The store layout").
type Stores struct {
	stateDir string
	// sameDir tells whether two paths are one directory (os.SameFile of
	// their stats when nil); a test stands in a case-insensitive filesystem
	// with it.
	sameDir func(a, b string) bool

	mu       sync.Mutex
	byTenant map[string]*Store
}

// NewStores returns the tenants' stores under stateDir.
func NewStores(stateDir string) *Stores {
	if abs, err := filepath.Abs(stateDir); err == nil {
		stateDir = abs
	}
	workspace.CloseToOthers(stateDir, filepath.Join(stateDir, "tenants"))
	return &Stores{stateDir: stateDir, byTenant: map[string]*Store{}}
}

// For is the tenant's store, opened once. A tenant whose directory is, on a
// case-insensitive filesystem, another spelling's is refused (tenantdir.Dir).
func (s *Stores) For(tenant string) (coordination.Store, error) {
	if err := coordination.CheckTenant(tenant); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.byTenant[tenant]; ok {
		return st, nil
	}
	dir, err := tenantdir.DirWith(s.stateDir, tenant, s.sameDir)
	if err != nil {
		return nil, err
	}
	st := New(dir)
	st.sameDir = s.sameDir
	if tenant != coordination.DefaultTenant {
		st.tenant = &spelling{parent: filepath.Dir(dir), name: tenant}
	}
	s.byTenant[tenant] = st
	return st, nil
}
