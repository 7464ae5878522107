package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fsck reports every damaged, stale or leftover file by path and exits 1;
// --repair moves the damage aside (deleting nothing), removes leftovers,
// rebuilds derived files, and exits 0.
func TestFsckReportsAndRepairsDamageByPath(t *testing.T) {
	state := t.TempDir()
	if out, code := cli(t, "run", "--state-dir", state, "--session-id", "team_fsck", "--models", "sim/strong,sim/strong,sim", "--seed", "1", "What is 17 * 23?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	dir := filepath.Join(state, "sessions", "team_fsck")
	votes, _ := filepath.Glob(filepath.Join(dir, "agents", "*", "*", "vote.json"))
	if len(votes) == 0 {
		t.Fatal("no vote written")
	}
	vote := votes[len(votes)-1]
	data, _ := os.ReadFile(vote)
	os.WriteFile(vote, data[:len(data)/3], 0o644)
	status := filepath.Join(dir, "status.json")
	os.WriteFile(status, []byte(`{"finish_reason": "compl`), 0o644)
	leftover := filepath.Join(dir, "agents", "agent_a", ".009.tmp-1234")
	os.MkdirAll(leftover, 0o755)

	out, code := cli(t, "fsck", "--state-dir", state, "team_fsck")
	if code != 1 {
		t.Fatalf("fsck of a damaged session: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{vote, status, leftover, "damaged", "derived", "leftover"} {
		if !strings.Contains(out, want) {
			t.Errorf("fsck output lacks %q:\n%s", want, out)
		}
	}
	if got, _ := os.ReadFile(vote); len(got) != len(data)/3 {
		t.Error("fsck without --repair changed the damaged vote")
	}

	out, code = cli(t, "fsck", "--repair", "--json", "--state-dir", state, "all")
	if code != 0 {
		t.Fatalf("fsck --repair: exit %d, want 0\n%s", code, out)
	}
	var rep struct {
		Sessions []fsckSession `json:"sessions"`
		Dirty    int           `json:"dirty"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Sessions) != 1 || !rep.Sessions[0].Clean {
		t.Fatalf("fsck --repair --json = %+v, %v\n%s", rep, err, out)
	}
	for _, p := range rep.Sessions[0].Problems {
		if p.Repaired == "" {
			t.Errorf("problem left unrepaired: %+v", p)
		}
	}
	aside, _ := filepath.Glob(filepath.Dir(vote) + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("the damaged step was not moved aside: %v", aside)
	}
	if got, _ := os.ReadFile(filepath.Join(aside[0], "vote.json")); len(got) != len(data)/3 {
		t.Error("the damaged vote's bytes were not kept")
	}
	if got, _ := os.ReadFile(status); !json.Valid(got) {
		t.Errorf("status.json not rebuilt: %q", got)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("leftover not removed: %v", err)
	}
	if out, code := cli(t, "fsck", "--state-dir", state, "team_fsck"); code != 0 {
		t.Errorf("fsck after repair: exit %d\n%s", code, out)
	}
}

// fsck all checks every tenant's sessions too, naming the tenant.
func TestFsckAllChecksEveryTenant(t *testing.T) {
	state := t.TempDir()
	tenantState := filepath.Join(state, "tenants", "acme")
	if out, code := cli(t, "run", "--state-dir", tenantState, "--session-id", "team_t", "--models", "sim,sim", "--seed", "2", "What is 2 + 2?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	status := filepath.Join(tenantState, "sessions", "team_t", "status.json")
	os.WriteFile(status, []byte("{"), 0o644)
	out, code := cli(t, "fsck", "--state-dir", state, "all")
	if code != 1 || !strings.Contains(out, "acme/team_t") || !strings.Contains(out, status) {
		t.Fatalf("fsck all with a damaged tenant session: exit %d\n%s", code, out)
	}
	if out, code := cli(t, "fsck", "--repair", "--state-dir", state, "--tenant", "acme", "team_t"); code != 0 {
		t.Fatalf("fsck --repair --tenant: exit %d\n%s", code, out)
	}
}
