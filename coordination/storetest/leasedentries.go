package storetest

import (
	"context"
	"errors"
	"fmt"
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

// testReadFencedEntries holds a store whose session lock can pass to a
// second holder (coordination.ReadFencedSessionStore) to fencing a
// decision's session entry by what its read of the log counted, in the
// write: refused with ErrChangedSinceRead, nothing written, once the log
// holds more cancels or more ends (decided, finished); written when it
// holds no more; fenced by the run's claim first when one is named. A
// store without one skips the case.
func testReadFencedEntries(t *testing.T, st coordination.Store) {
	ls, ctx := leases(t, st), context.Background()
	rs, ok := st.(coordination.ReadFencedSessionStore)
	if !ok {
		t.Skip("the store's session lock is exclusive: it needs no read fence in its writes")
	}
	write := func(what string, version int64, cancels, ends int) error {
		t.Helper()
		e := coordination.SessionEntry{Kind: coordination.SessionRevote, Time: time.Now(), Reason: what, Agents: []string{"a"}}
		_, err := rs.AppendSessionSinceRead(ctx, "s", version, coordination.LogRead{Cancels: cancels, Ends: ends}, e)
		return err
	}
	record := func(kind coordination.SessionEntryKind) {
		t.Helper()
		if _, err := st.AppendSession(ctx, "s", coordination.SessionEntry{Kind: kind, Time: time.Now(), Reason: "by another holder"}); err != nil {
			t.Fatal(err)
		}
	}
	changed := func(what string, version int64, cancels, ends int) {
		t.Helper()
		if err := write(what, version, cancels, ends); !errors.Is(err, coordination.ErrChangedSinceRead) {
			t.Errorf("%s = %v, want ErrChangedSinceRead", what, err)
		}
	}
	written := func(what string, version int64, cancels, ends int) {
		t.Helper()
		if err := write(what, version, cancels, ends); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}

	written("nothing since the read", 0, 0, 0)
	record(coordination.SessionCancelled)
	changed("read before the cancel", 0, 0, 0)
	changed("read before the cancel, more ends than there are", 0, 0, 5) // one count does not make up for the other
	written("read after the cancel", 0, 1, 0)
	record(coordination.SessionDecided)
	changed("read before the decision", 0, 1, 0)
	written("read after the decision", 0, 1, 1)
	record(coordination.SessionFinished)
	changed("read before the end", 0, 1, 1)
	record(coordination.SessionUsage)
	record(coordination.SessionResumed)
	written("read after the end, a spend and a resume since (counted by neither)", 0, 1, 2)
	a, err := ls.AcquireRun(ctx, "s", owner("a"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	changed("a's claim, read before the end", a.Version, 1, 1)
	written("a's claim, read after the end", a.Version, 1, 2)
	if err := write("a's claim, stale", a.Version+1, 1, 2); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("a decision under a claim that is not current = %v, want ErrLeaseLost", err)
	}
	// Both fences refusing, the lost claim is what the writer is told: its
	// run stops as another's, rather than decide again.
	if err := write("a's claim, stale, read before the cancel", a.Version+1, 0, 0); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("a decision under a claim that is not current, read before the cancel = %v, want ErrLeaseLost", err)
	}
	if err := write("a negative count", 0, -1, 0); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("a decision counting -1 cancels = %v, want ErrBadInput", err)
	}
	l, err := st.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Session {
		if e.Kind == coordination.SessionRevote {
			got = append(got, e.Reason)
		}
	}
	want := []string{"nothing since the read", "read after the cancel", "read after the decision",
		"read after the end, a spend and a resume since (counted by neither)", "a's claim, read after the end"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries written: %q; want only %q", got, want)
	}
}
