package tenantdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/tenantdir"
)

// The default tenant's sessions are in the state directory itself, any
// other's in tenants/<tenant>; a name that is no tenant's is refused with
// CheckTenant's error, and a name whose tenants/<name> is another
// spelling's directory (a symlink tenants/Acme -> acme stands in for a
// case-insensitive filesystem) with one naming both.
func TestDirIsTheTenantsOwnDirectoryOrARefusal(t *testing.T) {
	state := t.TempDir()
	if got, err := tenantdir.Dir(state, coordination.DefaultTenant); err != nil || got != state {
		t.Errorf("default tenant: %q, %v; want %q", got, err, state)
	}
	if got, err := tenantdir.Dir(state, "acme"); err != nil || got != filepath.Join(state, "tenants", "acme") {
		t.Errorf("tenant acme: %q, %v", got, err)
	}
	if _, err := tenantdir.Dir(state, "../acme"); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("tenant ../acme: %v, want ErrBadInput", err)
	}

	if err := os.MkdirAll(filepath.Join(state, "tenants", "acme", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	// On a case-sensitive filesystem another spelling is another directory.
	if _, err := tenantdir.Dir(state, "Acme"); err != nil {
		t.Errorf("tenant Acme refused beside acme on a case-sensitive filesystem: %v", err)
	}
	if err := os.Symlink("acme", filepath.Join(state, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	_, err := tenantdir.Dir(state, "Acme")
	if !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("tenant Acme opened over acme's directory: %v", err)
	}
	for _, want := range []string{`"Acme"`, `"acme"`, "letter case"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %s: %v", want, err)
		}
	}
	// DirWith asks the caller's sameDir: a folding filesystem refuses the
	// twin of a plain directory too.
	folding := func(a, b string) bool { return strings.EqualFold(a, b) }
	if _, err := tenantdir.DirWith(state, "ACME", folding); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("tenant ACME opened over acme's directory on a folding filesystem: %v", err)
	}
}
