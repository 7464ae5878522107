package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// testLeasedEntries holds a store with run leases to fencing a run's
// session entries by them (coordination.LeasedSessionStore): written while
// the claim is current, even expired if nobody claimed it since (as
// RenewRun renews it), and refused, with nothing written, once another
// claim replaced it or it was released, or before any claim.
func testLeasedEntries(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	fs, ok := st.(coordination.LeasedSessionStore)
	if !ok {
		t.Fatal("a store with run leases must fence a run's session entries by them: implement coordination.LeasedSessionStore")
	}
	entry := func(why string) coordination.SessionEntry {
		return coordination.SessionEntry{Kind: coordination.SessionRevote, Time: time.Now(), Reason: why, Agents: []string{"a"}}
	}
	refused := func(what string, version int64) {
		t.Helper()
		if _, err := fs.AppendSessionLeased(ctx, "s", version, entry(what)); !errors.Is(err, coordination.ErrLeaseLost) {
			t.Errorf("%s: AppendSessionLeased(claim %d) = %v, want ErrLeaseLost", what, version, err)
		}
	}
	written := func(what string, version int64) {
		t.Helper()
		if _, err := fs.AppendSessionLeased(ctx, "s", version, entry(what)); err != nil {
			t.Fatalf("%s: AppendSessionLeased(claim %d) = %v, want it written", what, version, err)
		}
	}

	refused("before any claim", 1)
	a, err := ls.AcquireRun(ctx, "s", owner("a"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	written("a's claim, held", a.Version)
	time.Sleep(60 * time.Millisecond)
	written("a's claim, expired but not claimed again", a.Version)
	b, err := ls.AcquireRun(ctx, "s", owner("b"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	refused("a's claim, replaced by b's", a.Version)
	written("b's claim", b.Version)
	if err := ls.ReleaseRun(ctx, "s", b.Version); err != nil {
		t.Fatal(err)
	}
	refused("b's claim, released", b.Version)
	if _, err := fs.AppendSessionLeased(ctx, "missing", b.Version, entry("unknown session")); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("AppendSessionLeased of an unknown session = %v, want ErrSessionNotFound", err)
	}

	l, err := st.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a's claim, held", "a's claim, expired but not claimed again", "b's claim"}
	if len(l.Session) != len(want) {
		t.Fatalf("session entries = %+v; want only the %d written under a current claim", l.Session, len(want))
	}
	for i, e := range l.Session {
		if e.Reason != want[i] || e.Seq != i+1 {
			t.Errorf("session entry %d = seq %d %q; want seq %d %q", i, e.Seq, e.Reason, i+1, want[i])
		}
	}
}
