package main

import (
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
