package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func TestSessionsPagesFiltersAndStaysInItsTenant(t *testing.T) {
	dir := t.TempDir()
	for _, task := range []string{"What is 2 * 3?", "What is 4 * 5?", "Write a haiku about Go"} {
		if out, code := cli(t, "run", "--state-dir", dir, "--models", "sim/strong,sim/strong", "--seed", "1", task); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, out)
		}
	}
	// Another tenant's session must never show in the default listing.
	// Seeded: an unseeded pair of sims now and then splits its votes and
	// the run exits 7.
	other := filepath.Join(dir, "tenants", "acme")
	if out, code := cli(t, "run", "--state-dir", other, "--models", "sim,sim", "--seed", "1", "What is 6 * 7?"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}

	out, code := cli(t, "sessions", "--state-dir", dir, "--limit", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Write a haiku") || !strings.Contains(out, "4 * 5") || strings.Contains(out, "2 * 3") {
		t.Fatalf("page 1 should hold the two newest sessions:\n%s", out)
	}
	if !strings.Contains(out, "Page 1 of 2 (3 sessions); next: massgen-mcp sessions --state-dir "+shellQuote(dir)+" --page 2") {
		t.Fatalf("page 1 should point at page 2:\n%s", out)
	}
	out, _ = cli(t, "sessions", "--state-dir", dir, "--limit", "2", "--page", "2")
	if !strings.Contains(out, "2 * 3") || strings.Contains(out, "haiku") || strings.Contains(out, "next:") {
		t.Fatalf("page 2:\n%s", out)
	}

	out, _ = cli(t, "sessions", "--state-dir", dir, "--limit", "1", "--all", "--json")
	var page coordination.SessionPage
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if page.Total != 3 || len(page.Sessions) != 3 || page.Next != 0 {
		t.Fatalf("--all should list every page of this tenant only: %+v", page)
	}
	for _, s := range page.Sessions {
		if s.Status != "finished" || s.Winner == nil || s.CostUSD == nil || len(s.Agents) != 2 || s.CreatedAt.IsZero() {
			t.Fatalf("row lacks status, winner, cost, agents or start: %+v", s)
		}
	}

	out, _ = cli(t, "sessions", "--state-dir", dir, "--grep", "haiku")
	if !strings.Contains(out, "haiku") || strings.Contains(out, "4 * 5") {
		t.Fatalf("--grep:\n%s", out)
	}
	if out, _ = cli(t, "sessions", "--state-dir", dir, "--status", "running"); !strings.Contains(out, "no sessions") {
		t.Fatalf("--status running:\n%s", out)
	}
	if out, _ = cli(t, "sessions", "--state-dir", dir, "--tenant", "acme"); !strings.Contains(out, "6 * 7") || strings.Contains(out, "haiku") {
		t.Fatalf("--tenant acme:\n%s", out)
	}
	if _, code := cli(t, "sessions", "--state-dir", dir, "--tenant", "../x"); code != exitBadInput {
		t.Fatalf("a tenant name with a path in it must be refused, got exit %d", code)
	}
}

func TestStatusWithoutAnIDPointsAtSessions(t *testing.T) {
	out, code := cli(t, "status", "--state-dir", t.TempDir())
	if code != exitBadInput || !strings.Contains(out, "massgen-mcp sessions") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestStatusTextHasTheVoteGraphAndTheSwimlane(t *testing.T) {
	dir := t.TempDir()
	out, code := cli(t, "run", "--state-dir", dir, "--models", "sim/strong,sim/strong,sim/strong", "--seed", "1", "--session-id", "g", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out, code = cli(t, "status", "--state-dir", dir, "g")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	for _, want := range []string{"**Vote graph**", "◀── ", "★ winner", "majority: 2 of 3 votes needed", "**Timeline by agent**", "agent_a  ", "A #", "V agent_"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// The same pictures for a session read by its directory.
	sdir := filepath.Join(dir, "sessions", "g")
	if _, err := os.Stat(sdir); err != nil {
		t.Fatal(err)
	}
	if out, _ = cli(t, "status", sdir); !strings.Contains(out, "**Timeline by agent**") || !strings.Contains(out, "★ winner") {
		t.Fatalf("status of a directory:\n%s", out)
	}
}
