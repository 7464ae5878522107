package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFsckAllReportsADirectoryNoTenantCanBeNamed: a directory under
// tenants/ whose name no tenant can have ("acme corp") is reached by no
// server and no --tenant, so its sessions are neither served nor checked.
// fsck all reports it as a tenant it could not check, saying why and what
// to do, and exits 1 as for any tenant left unchecked; hidden entries
// (.DS_Store, a filesystem's .snapshot) are no tenant's and stay unsaid.
// Before, fsck all skipped it silently and exited 0.
func TestFsckAllReportsADirectoryNoTenantCanBeNamed(t *testing.T) {
	state := t.TempDir()
	for _, tn := range []string{"acme corp", "bob"} {
		dir := filepath.Join(state, "tenants", tn)
		if out, code := cli(t, "run", "--state-dir", dir, "--session-id", "team_x", "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
	}
	if err := os.WriteFile(filepath.Join(state, "tenants", ".DS_Store"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(state, "tenants", ".snapshot"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "fsck", "--state-dir", state, "all")
	if code != 1 {
		t.Errorf("fsck all with a directory no tenant can be named: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"tenant acme corp: not checked", "letters, digits", "rename", "bob/team_x: ok", "1 tenant could not be checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("fsck all does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".DS_Store") || strings.Contains(out, ".snapshot") {
		t.Errorf("fsck all reports a hidden entry of tenants/:\n%s", out)
	}
	out, _ = cli(t, "fsck", "--json", "--state-dir", state, "all")
	var report struct {
		Tenants []fsckTenant `json:"tenants_unchecked"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &report); err != nil {
		t.Fatalf("fsck --json all: %v\n%s", err, out)
	}
	if len(report.Tenants) != 1 || report.Tenants[0].Tenant != "acme corp" {
		t.Errorf("fsck --json all: tenants unchecked %+v, want acme corp's alone\n%s", report.Tenants, out)
	}
}
