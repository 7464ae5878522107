package coordination

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestASpooledLandingIsFoundInTheLedgerAsItWasWritten: a record read back
// from its file still recognises the step's own entry, whose time the
// store keeps to the millisecond while the record was made to the
// nanosecond; an entry at another time or with other spend is not it.
func TestASpooledLandingIsFoundInTheLedgerAsItWasWritten(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)
	u := providers.Usage{Input: 100, Output: 20}
	entry := &Entry{Agent: "agent1", Time: at, Usage: u}
	rec := &usageRecord{entry: SessionEntry{Kind: SessionUsage, Time: at, Agents: []string{"agent1"}, Usage: &u}, landed: landedAs(3, entry)}
	data, err := json.Marshal(spooledSpend{Session: "s1", Entry: rec.entry, Landed: rec.landed})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), spendPendingDir)
	path := filepath.Join(dir, "s1-0001.json")
	if err := writeWhole(path, data); err != nil {
		t.Fatal(err)
	}
	id, back, err := readSpooled(path)
	if err != nil || id != "s1" {
		t.Fatalf("read back: %q %v", id, err)
	}
	stored := Entry{Agent: "agent1", Step: 3, Time: at.Truncate(time.Millisecond), Usage: u}
	if !back.landed.in(&Ledger{Agents: map[string][]Entry{"agent1": {stored}}}) {
		t.Error("the spooled landing does not find the step's entry as the store keeps it")
	}
	other := stored
	other.Time = other.Time.Add(time.Millisecond)
	if back.landed.in(&Ledger{Agents: map[string][]Entry{"agent1": {other}}}) {
		t.Error("an entry written at another time was taken for the step's own")
	}
	other = stored
	other.Usage.Output++
	if back.landed.in(&Ledger{Agents: map[string][]Entry{"agent1": {other}}}) {
		t.Error("an entry with other spend was taken for the step's own")
	}
	if !back.is(SessionEntry{Kind: SessionUsage, Time: at.Truncate(time.Millisecond), Agents: []string{"agent1"}, Usage: &u}) {
		t.Error("the spooled record does not find its own usage entry as the store keeps it")
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmp) != 0 {
		t.Errorf("temp files left: %v", tmp)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestASessionDirOutsideAStateDirHasNoSpool: a store opened on a session
// directory elsewhere (its parent not sessions/) keeps no spool beside it,
// and a store without directories none at all.
func TestASessionDirOutsideAStateDirHasNoSpool(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"/state/sessions/spool", "/state/spend-pending"},
		{"/state/tenants/acme/sessions/spool", "/state/tenants/acme/spend-pending"},
		{"/home/me/runs/spool", ""},
		{"", ""},
	} {
		if got := spoolDirOf(tc.dir); got != tc.want {
			t.Errorf("sessions at %q: spool %q, want %q", tc.dir, got, tc.want)
		}
	}
}

// TestHeldSpendIsNotCountedBesideItsOwnEntry: a held record whose attempt
// wrote it before its answer was lost (its usage entry, or the step's own
// entry) is in the ledger already, and the budget counts it once.
func TestHeldSpendIsNotCountedBesideItsOwnEntry(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 987654321, time.UTC)
	u := providers.Usage{Input: 100, Output: 20}
	entry := &Entry{Agent: "agent1", Time: at, Usage: u}
	byStep := &usageRecord{entry: SessionEntry{Kind: SessionUsage, Time: at, Agents: []string{"agent1"}, Usage: &u, Reason: "step 2, given up"}, landed: landedAs(2, entry)}
	cancelled := &usageRecord{entry: SessionEntry{Kind: SessionUsage, Time: at, Agents: []string{"agent2"}, Usage: &u, Reason: "cancelled call of step 1"}}
	var sp spool
	sp.hold("s1", byStep)
	sp.hold("s1", cancelled)
	other := *cancelled
	sp.hold("s2", &other) // another session's: never counted here
	empty := &Ledger{Agents: map[string][]Entry{}}
	if got := sp.heldFor("s1", empty); got.tokens != 240 {
		t.Fatalf("held for s1 with nothing in its ledger: %d tokens, want 240", got.tokens)
	}
	landed := &Ledger{Agents: map[string][]Entry{"agent1": {{Agent: "agent1", Step: 2, Time: at.Truncate(time.Millisecond), Usage: u}}},
		Session: []SessionEntry{{Kind: SessionUsage, Time: at.Truncate(time.Millisecond), Agents: []string{"agent2"}, Usage: &u, Reason: "cancelled call of step 1"}}}
	if got := sp.heldFor("s1", landed); got.tokens != 0 {
		t.Errorf("held for s1 beside both records' own entries: %d tokens, want 0 (counted twice)", got.tokens)
	}
	sp.recorded(byStep)
	sp.recorded(cancelled)
	sp.recorded(&other)
	if got := sp.heldFor("s1", empty); got.tokens != 0 || sp.held.Load() != 0 {
		t.Errorf("after both were recorded: %d tokens held, %d records", got.tokens, sp.held.Load())
	}
}
