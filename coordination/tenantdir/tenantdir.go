package tenantdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Dir is the directory holding the tenant's sessions/ under stateDir:
// stateDir itself for the default tenant, else tenants/<tenant>. It refuses
// a name CheckTenant refuses, and a name that, on a case-insensitive
// filesystem (macOS, Windows, casefold ext4, SMB, exFAT), is the directory of
// a tenant spelled otherwise: the CLI's --tenant reaches the store through
// it, as serve's tenants do through the stores' For.
func Dir(stateDir, tenant string) (string, error) {
	return DirWith(stateDir, tenant, nil)
}

// DirWith is Dir asking sameDir whether two paths are one directory (the
// filesystem's answer, os.SameFile, when nil); a test stands in a
// case-insensitive filesystem with it.
func DirWith(stateDir, tenant string, sameDir func(a, b string) bool) (string, error) {
	if err := coordination.CheckTenant(tenant); err != nil {
		return "", err
	}
	if tenant == coordination.DefaultTenant {
		return stateDir, nil
	}
	parent := filepath.Join(stateDir, "tenants")
	dir := filepath.Join(parent, tenant)
	if other := CaseTwin(parent, tenant, sameDir); other != "" {
		return "", TwinError(dir, tenant, other)
	}
	return dir, nil
}

// TwinError refuses tenant, whose directory dir is tenant other's.
func TwinError(dir, tenant, other string) error {
	return fmt.Errorf("%w: tenant %q cannot be opened: this filesystem ignores letter case, so its directory %s is tenant %q's, and one tenant would read and write the other's sessions; if they are the same tenant, spell it %q (in the tokens file and --tenant) or rename the directory to %q while no server runs; otherwise choose a name that differs in more than letter case",
		coordination.ErrBadInput, tenant, dir, other, other, tenant)
}

// CaseTwin is the entry of parent (a tenant's or a session's directory)
// whose name equals name but for letter case and is, on this filesystem, the
// very directory name resolves to; "" if there is none. An entry spelled
// as asked does not end the search: beside a twin it is the same directory
// only where both resolve to one (a symlink), which is as shared. The question is
// asked of the filesystem itself (is parent/<name> the same directory as
// the twin?), not of a probe file, so it is right for every directory of a
// mixed tree (one mount casefolded, another not) and needs no write. It
// reads parent once per tenant opened, and for a session only when a create
// finds its directory taken. sameDir is as DirWith's.
func CaseTwin(parent, name string, sameDir func(a, b string) bool) string {
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
