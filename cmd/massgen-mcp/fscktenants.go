package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// fsckTenantDir is one tenant fsck all is to check, or, with err, one it
// found under tenants/ and cannot.
type fsckTenantDir struct {
	name string // "" for the default tenant
	err  error
}

// fsckTenantDirs lists the tenants fsck all checks: the default one and
// every entry of <dir>/tenants named as a tenant can be. A symlink is
// followed, as serve and every --tenant command follow it (tenantdir.Dir
// refuses only a case twin): skipping it would leave a tenant's sessions
// unchecked with nothing said. One leading to no directory is listed with
// why and what to do, and so is a directory (or symlink) named as no
// tenant can be: its sessions are reached by nothing, which a person
// should hear of. Hidden entries (.DS_Store, .snapshot) are no tenant's.
// Symlinks come after every directory, so one leading
// to another tenant's directory is the one sameDirs reports, whatever the
// names' order, and that tenant's sessions are checked under its own name.
func fsckTenantDirs(dir string) []fsckTenantDir {
	list, links := []fsckTenantDir{{}}, []fsckTenantDir(nil)
	parent := filepath.Join(dir, "tenants")
	des, _ := os.ReadDir(parent)
	for _, de := range des {
		name := de.Name()
		isLink := de.Type()&fs.ModeSymlink != 0
		switch {
		case strings.HasPrefix(name, "."):
			// Hidden: a desktop's or a filesystem's (.DS_Store,
			// .snapshot), never a tenant's, whose names begin with none.
			continue
		case !coordination.ValidTenant(name) && (de.IsDir() || isLink):
			list = append(list, fsckTenantDir{name: name, err: fmt.Errorf(
				"%s is named as no tenant can be (1-64 letters, digits, '_' or '-'), so no server or --tenant reaches its sessions: rename it to its tenant's name, or move it out of %s if it holds no tenant's sessions",
				filepath.Join(parent, name), parent)})
			continue
		case !coordination.ValidTenant(name):
			continue // a file: no tenant's directory
		}
		switch {
		case de.IsDir():
			list = append(list, fsckTenantDir{name: name})
		case isLink:
			p := filepath.Join(parent, name)
			fi, err := os.Stat(p)
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is said once, below
			}
			switch {
			case err != nil:
				err = fmt.Errorf("%s is a symlink that leads to no directory (%w): point it at the tenant's directory, or remove it if the tenant is gone", p, err)
			case !fi.IsDir():
				err = fmt.Errorf("%s is a symlink to a file, not to a tenant's directory: point it at the tenant's directory, or remove it", p)
			}
			links = append(links, fsckTenantDir{name: name, err: err})
		}
	}
	return append(list, links...)
}

// sameDirs are the tenant directories fsck all has checked, so that one
// reached again through a symlink is reported, not checked (and repaired)
// a second time under another name.
type sameDirs []struct {
	fi     os.FileInfo
	tenant string
}

// add records tenant's directory, or says whose it already is.
func (s *sameDirs) add(dir, tenant string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil // nothing there yet: no sessions to check twice
	}
	for _, d := range *s {
		if os.SameFile(d.fi, fi) {
			other := tenantOrDefault(d.tenant)
			return fmt.Errorf("%s is tenant %s's directory (through a symlink), checked as %s's; serve gives both tenants the same sessions: remove the symlink unless %s and %s are meant to be one tenant", dir, other, other, tenantOrDefault(tenant), other)
		}
	}
	*s = append(*s, struct {
		fi     os.FileInfo
		tenant string
	}{fi, tenant})
	return nil
}
