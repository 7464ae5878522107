package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// DeleteCases are the suite's cases for coordination.SessionDeleter (a
// store without it skips them): a deleted session is gone whole, and no
// other session loses anything.
var DeleteCases = []Case{
	{"DeletedSessionIsGoneWholeAndOthersKeepTheirs", testDeleteSession},
}

func deleter(t *testing.T, st coordination.Store) coordination.SessionDeleter {
	t.Helper()
	d, ok := st.(coordination.SessionDeleter)
	if !ok {
		t.Skip("the store does not delete sessions (coordination.SessionDeleter)")
	}
	return d
}

// fill gives a session a step, a session entry, an event and, where the
// store keeps them, a released run lease.
func fill(t *testing.T, st coordination.Store, id string) {
	t.Helper()
	ctx := context.Background()
	step(t, st, id, answer("agent_a", "an answer of "+id))
	if _, err := st.AppendSession(ctx, id, coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "done with " + id}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvent(ctx, id, coordination.Event{Type: "x"}); err != nil {
		t.Fatal(err)
	}
	if ls, ok := st.(coordination.LeaseStore); ok {
		l, err := ls.AcquireRun(ctx, id, owner("o"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := ls.ReleaseRun(ctx, id, l.Version); err != nil {
			t.Fatal(err)
		}
	}
}

func testDeleteSession(t *testing.T, st coordination.Store) {
	d := deleter(t, st)
	ctx := context.Background()
	create(t, st, "gone")
	create(t, st, "kept")
	fill(t, st, "gone")
	fill(t, st, "kept")
	if err := d.DeleteSession(ctx, "../kept"); err == nil {
		t.Fatal("DeleteSession took an id with a path in it")
	}
	if err := d.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, "gone"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("Session of a deleted session: %v, want ErrSessionNotFound", err)
	}
	if _, err := st.Ledger(ctx, "gone"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("Ledger of a deleted session: %v, want ErrSessionNotFound", err)
	}
	if _, err := st.LockRun(ctx, "gone"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("LockRun of a deleted session: %v, want ErrSessionNotFound (a resume is refused, nothing made again)", err)
	}
	if _, err := st.LockStep(ctx, "gone", "agent_a"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("LockStep of a deleted session: %v, want ErrSessionNotFound", err)
	}
	if err := d.DeleteSession(ctx, "gone"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("deleting it again: %v, want ErrSessionNotFound", err)
	}
	ids, err := st.Sessions(ctx)
	if err != nil || len(ids) != 1 || ids[0] != "kept" {
		t.Fatalf("Sessions after the delete = %v (%v), want [kept]", ids, err)
	}
	l := ledger(t, st, "kept")
	if len(l.Agents["agent_a"]) != 1 || len(l.Session) != 1 || l.Session[0].Reason != "done with kept" {
		t.Fatalf("the other session's ledger changed: %+v", l)
	}
	// Created again under the same id, the session starts empty: nothing of
	// the deleted one was left to read as its.
	create(t, st, "gone")
	if l := ledger(t, st, "gone"); len(l.Agents["agent_a"]) != 0 || len(l.Session) != 0 {
		t.Fatalf("a session created again under a deleted id reads the old ledger: %+v", l)
	}
	if ls, ok := st.(coordination.LeaseStore); ok {
		if l, err := ls.ReadRun(ctx, "gone"); err != nil || l != nil {
			t.Fatalf("a session created again under a deleted id has the old run lease %+v (%v)", l, err)
		}
	}
}

// testDeleteStaysInItsTenant: deleting a session deletes nothing of
// another tenant's session of the same id.
func testDeleteStaysInItsTenant(t *testing.T, ss coordination.Stores) {
	def, err := ss.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	acme, err := ss.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	d := deleter(t, def)
	create(t, def, "s1")
	create(t, acme, "s1")
	fill(t, def, "s1")
	fill(t, acme, "s1")
	if err := d.DeleteSession(context.Background(), "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := acme.Session(context.Background(), "s1"); err != nil {
		t.Fatalf("deleting the default tenant's s1 lost acme's: %v", err)
	}
	if l := ledger(t, acme, "s1"); len(l.Agents["agent_a"]) != 1 || len(l.Session) != 1 {
		t.Fatalf("acme's s1 lost its ledger: %+v", l)
	}
}
