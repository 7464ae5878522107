package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
		return "", fmt.Errorf("%w: tenant %q cannot be opened: this filesystem ignores letter case, so its directory %s is tenant %q's, and one tenant would read and write the other's sessions; if they are the same tenant, spell it %q (in the tokens file and --tenant) or rename the directory to %q while no server runs; otherwise choose a name that differs in more than letter case",
			coordination.ErrBadInput, tenant, dir, other, other, tenant)
	}
	return dir, nil
}

// caseTwin is the entry of parent (a tenant's or a session's directory)
// whose name equals name but for letter case and is, on this filesystem, the
// very directory name resolves to; "" if there is none. The question is
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
		if de.Name() == name {
			return "" // its own directory, spelled as asked
		}
	}
	for _, de := range des {
		other := de.Name()
		if strings.EqualFold(other, name) && sameDir(filepath.Join(parent, other), filepath.Join(parent, name)) {
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
