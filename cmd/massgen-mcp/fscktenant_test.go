package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --tenant default names the default tenant in fsck as in every other
// session command (sessions, status, prune, approve): its sessions are
// checked, not an empty <state-dir>/tenants/default that reports nothing
// and exits 0; and a tenant name that is not one (a typo, a path) is
// refused, not reported as a clean, empty check.
func TestFsckTenantDefaultChecksTheDefaultTenantAndABadTenantIsRefused(t *testing.T) {
	state := t.TempDir()
	if out, code := cli(t, "run", "--state-dir", state, "--session-id", "team_ten", "--models", "sim/strong,sim/strong,sim", "--seed", "1", "What is 17 * 23?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if out, code := cli(t, "fsck", "--state-dir", state, "--tenant", "default", "team_ten"); code != 0 || !strings.Contains(out, "team_ten: ok") {
		t.Errorf("fsck --tenant default <id> did not check the default tenant's session: exit %d\n%s", code, out)
	}
	if out, code := cli(t, "fsck", "--state-dir", state, "--tenant", "default", "all"); code != 0 || !strings.Contains(out, "team_ten: ok") {
		t.Errorf("fsck --tenant default all checked none of the default tenant's sessions: exit %d\n%s", code, out)
	}
	if out, code := cli(t, "fsck", "--state-dir", state, "--tenant", "../..", "all"); code == 0 {
		t.Errorf("fsck --tenant ../.. was taken: exit 0\n%s", out)
	}
}

// fsck all meeting a tenant it cannot open (its directory is another
// spelling's: a symlink tenants/Acme -> acme stands in for a
// case-insensitive filesystem) reports that tenant with what to do and goes
// on to check every other tenant, exiting 1 at the end, where before the
// refusal ended the walk and the tenants after it went unchecked.
func TestFsckAllReportsATwinTenantAndChecksTheOthers(t *testing.T) {
	state := t.TempDir()
	for _, tn := range []string{"acme", "bob"} {
		dir := filepath.Join(state, "tenants", tn)
		if out, code := cli(t, "run", "--state-dir", dir, "--session-id", "team_"+tn, "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
	}
	if err := os.Symlink("acme", filepath.Join(state, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "fsck", "--state-dir", state, "all")
	if code != 1 {
		t.Errorf("fsck all with a twin tenant: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"tenant acme:", "letter case", "rename the directory", "bob/team_bob: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("fsck all does not say %q:\n%s", want, out)
		}
	}
	out, code = cli(t, "fsck", "--json", "--state-dir", state, "all")
	var report struct {
		Sessions []fsckSession `json:"sessions"`
		Tenants  []struct {
			Tenant string `json:"tenant"`
			Error  string `json:"error"`
		} `json:"tenants_unchecked"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &report); err != nil {
		t.Fatalf("fsck --json all: %v\n%s", err, out)
	}
	if code != 1 || len(report.Tenants) != 1 || report.Tenants[0].Tenant != "acme" || !strings.Contains(report.Tenants[0].Error, "letter case") || len(report.Sessions) != 1 {
		t.Errorf("fsck --json all: exit %d, tenants unchecked %+v, %d sessions; want 1, acme's refusal, bob's 1 session\n%s", code, report.Tenants, len(report.Sessions), out)
	}
}
