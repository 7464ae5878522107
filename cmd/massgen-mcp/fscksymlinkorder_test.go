package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFsckAllChecksATenantsOwnDirectoryUnderItsOwnName: a symlink that
// sorts before the directory it leads to (tenants/alice -> bob) is the one
// reported, and bob's sessions are checked as bob's. Before, fsck all
// followed the names in order: bob's session was checked as alice's, and
// bob, the real directory, was reported as "tenant alice's directory
// (through a symlink)" with advice to remove the symlink.
func TestFsckAllChecksATenantsOwnDirectoryUnderItsOwnName(t *testing.T) {
	state := t.TempDir()
	tenants := filepath.Join(state, "tenants")
	if out, code := cli(t, "run", "--state-dir", filepath.Join(tenants, "bob"), "--session-id", "team_bob", "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if err := os.Symlink("bob", filepath.Join(tenants, "alice")); err != nil {
		t.Fatal(err)
	}
	out, _ := cli(t, "fsck", "--json", "--state-dir", state, "all")
	var report struct {
		Sessions []fsckSession `json:"sessions"`
		Tenants  []fsckTenant  `json:"tenants_unchecked"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &report); err != nil {
		t.Fatalf("fsck --json all: %v\n%s", err, out)
	}
	if len(report.Tenants) != 1 || report.Tenants[0].Tenant != "alice" || !strings.Contains(report.Tenants[0].Error, "tenant bob's directory") {
		t.Errorf("tenants_unchecked = %+v; want alice, the symlink, reported as bob's directory", report.Tenants)
	}
	if len(report.Sessions) != 1 || report.Sessions[0].Tenant != "bob" {
		t.Errorf("sessions = %+v; want team_bob checked as bob's", report.Sessions)
	}
}
