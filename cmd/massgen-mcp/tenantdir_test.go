package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every session command with --tenant reaches the tenant's directory
// through tenantdir.Dir: a name whose tenants/<name> is another
// spelling's directory is refused with its error, as serve refuses it, and
// a name that is no tenant's with CheckTenant's. A symlink tenants/Acme ->
// acme stands in for a case-insensitive filesystem, where tenants/Acme
// resolves to acme's directory.
func TestEveryTenantFlagRefusesAnotherSpellingsDirectory(t *testing.T) {
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(state, "tenants", "acme", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("acme", filepath.Join(state, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MASSGEN_STORE", "")
	commands := [][]string{
		{"sessions"},
		{"sessions", "prune", "--older-than", "7d"},
		{"status", "team_x"},
		{"status", "--watch", "team_x"},
		{"cancel", "team_x"},
		{"approve", "req_x"},
		{"deny", "req_x"},
		{"fsck", "team_x"},
		{"fsck", "all"},
	}
	for _, c := range commands {
		for tenant, want := range map[string]string{"Acme": "letter case", "../acme": "must be 1-64 letters"} {
			args := append([]string{c[0]}, c[1:]...)
			args = append(args, "--state-dir", state, "--tenant", tenant)
			out, code := cli(t, args...)
			if code == 0 || !strings.Contains(out, want) {
				t.Errorf("%s --tenant %s: exit %d, want an error saying %q:\n%s", strings.Join(c, " "), tenant, code, want, out)
			}
		}
	}
}
