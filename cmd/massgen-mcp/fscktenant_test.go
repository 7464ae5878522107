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
// case-insensitive filesystem) reports that tenant, and the symlink's too,
// with what to do and goes
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
	for _, want := range []string{"tenant acme:", "tenant Acme:", "letter case", "rename the directory", "bob/team_bob: ok"} {
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
	if code != 1 || len(report.Tenants) != 2 || report.Tenants[0].Tenant != "acme" || report.Tenants[1].Tenant != "Acme" || !strings.Contains(report.Tenants[0].Error, "letter case") || len(report.Sessions) != 1 {
		t.Errorf("fsck --json all: exit %d, tenants unchecked %+v, %d sessions; want 1, Acme's and acme's refusals, bob's 1 session\n%s", code, report.Tenants, len(report.Sessions), out)
	}
}

// fsck all meets tenant directories that are symlinks as serve and every
// --tenant command do (tenantdir.Dir follows them): one leading to a
// directory is checked; one leading nowhere is reported with what to do;
// one leading to another tenant's directory is reported, not checked twice
// (--repair would repair one session under two names), since serve gives
// both tenants the same sessions; and a case twin (Acme -> acme) is
// refused under its own name as well. Before, fsck all skipped every
// symlink silently and exited 0.
func TestFsckAllFollowsATenantSymlinkAndReportsOneItCannot(t *testing.T) {
	state, elsewhere := t.TempDir(), t.TempDir()
	bob := filepath.Join(elsewhere, "bob")
	if out, code := cli(t, "run", "--state-dir", bob, "--session-id", "team_bob", "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	tenants := filepath.Join(state, "tenants")
	if err := os.MkdirAll(tenants, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"bob": bob, "carol": "bob", "gone": filepath.Join(elsewhere, "nothing")} {
		if err := os.Symlink(target, filepath.Join(tenants, name)); err != nil {
			t.Fatal(err)
		}
	}
	out, code := cli(t, "fsck", "--state-dir", state, "all")
	if code != 1 {
		t.Errorf("fsck all with a dangling tenant symlink: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"bob/team_bob: ok", "tenant gone:", "tenant carol:", "tenant bob's"} {
		if !strings.Contains(out, want) {
			t.Errorf("fsck all does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "carol/team_bob") {
		t.Errorf("fsck all checked bob's session again as carol's:\n%s", out)
	}

	out, _ = cli(t, "fsck", "--json", "--state-dir", state, "all")
	var report struct {
		Tenants []fsckTenant `json:"tenants_unchecked"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &report); err != nil {
		t.Fatalf("fsck --json all: %v\n%s", err, out)
	}
	why := map[string]string{}
	for _, u := range report.Tenants {
		why[u.Tenant] = u.Error
	}
	if len(why) != 2 || !strings.Contains(why["gone"], "symlink") || !strings.Contains(why["gone"], "remove") || !strings.Contains(why["carol"], "bob") {
		t.Errorf("tenants_unchecked = %+v, want gone (a symlink to nothing, and what to do) and carol (bob's directory)", report.Tenants)
	}
}
