package filestore

import (
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/coordination/tenantdir"
)

// spelling is the directory a tenant's store must find under tenants/
// spelled as the tenant is. Stores.For checks it as the tenant opens, but
// two spellings opened before either has a directory both pass, and on a
// case-insensitive filesystem the second one's mkdir lands in the first's
// directory. So the store checks again once its directory is there (after
// the mkdir of a create, or when a read finds it) until it has seen it
// spelled as asked: one read of tenants/ per store, then nothing.
type spelling struct {
	parent, name string
	ok           atomic.Bool
}

// ownDir refuses the tenant's store once its directory turns out to be
// another spelling's.
func (s *Store) ownDir() error {
	t := s.tenant
	if t == nil || t.ok.Load() {
		return nil
	}
	dir := filepath.Join(t.parent, t.name)
	if other := tenantdir.CaseTwin(t.parent, t.name, s.sameDir); other != "" {
		return tenantdir.TwinError(dir, t.name, other)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.ok.Store(true) // there, and no twin's: its own for good
	}
	return nil
}
