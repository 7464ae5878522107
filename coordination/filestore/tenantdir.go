package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TenantDir is the directory holding the tenant's sessions/ under stateDir:
// stateDir itself for the default tenant, else tenants/<tenant>. It refuses
// a name ValidTenant refuses, and a name that, on a case-insensitive
// filesystem (macOS, Windows, casefold ext4, SMB, exFAT), is the directory of
// a tenant spelled otherwise: the CLI's --tenant reaches the store through
// it, as serve's tenants do through Stores.For.
func TenantDir(stateDir, tenant string) (string, error) {
	return tenantDir(stateDir, tenant, nil)
}

func tenantDir(stateDir, tenant string, sameDir func(a, b string) bool) (string, error) {
	if err := coordination.CheckTenant(tenant); err != nil {
		return "", err
	}
	if tenant == coordination.DefaultTenant {
		return stateDir, nil
	}
	parent := filepath.Join(stateDir, "tenants")
	dir := filepath.Join(parent, tenant)
	if other := caseTwin(parent, tenant, sameDir); other != "" {
		return "", twinTenant(dir, tenant, other)
	}
	return dir, nil
}

// twinTenant refuses tenant, whose directory dir is tenant other's.
func twinTenant(dir, tenant, other string) error {
	return fmt.Errorf("%w: tenant %q cannot be opened: this filesystem ignores letter case, so its directory %s is tenant %q's, and one tenant would read and write the other's sessions; if they are the same tenant, spell it %q (in the tokens file and --tenant) or rename the directory to %q while no server runs; otherwise choose a name that differs in more than letter case",
		coordination.ErrBadInput, tenant, dir, other, other, tenant)
}

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
	if other := caseTwin(t.parent, t.name, s.sameDir); other != "" {
		return twinTenant(dir, t.name, other)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.ok.Store(true) // there, and no twin's: its own for good
	}
	return nil
}

// caseTwin is the entry of parent (a tenant's or a session's directory)
// whose name equals name but for letter case and is, on this filesystem, the
// very directory name resolves to; "" if there is none. An entry spelled
// as asked does not end the search: beside a twin it is the same directory
// only where both resolve to one (a symlink), which is as shared. The question is
// asked of the filesystem itself (is parent/<name> the same directory as
// the twin?), not of a probe file, so it is right for every directory of a
// mixed tree (one mount casefolded, another not) and needs no write. It
// reads parent once per tenant opened, and for a session only when a create
// finds its directory taken.
func caseTwin(parent, name string, sameDir func(a, b string) bool) string {
	des, err := os.ReadDir(parent)
	if err != nil {
		return "" // nothing there yet: nothing to share a directory with
	}
	if sameDir == nil {
		sameDir = sameFile
	}
	for _, de := range des {
		other := de.Name()
		if other != name && strings.EqualFold(other, name) && sameDir(filepath.Join(parent, other), filepath.Join(parent, name)) {
			return other
		}
	}
	return ""
}

// sameFile tells whether two paths are one file or directory.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
