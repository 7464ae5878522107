package pgstore

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// openEventsWrite begins, on a connection of its own, the write of events a
// replica's group sends (eventsInsert), one event per (session, type), and
// leaves it uncommitted: the group of a replica whose commit is late. The
// returned commit ends it.
func openEventsWrite(t *testing.T, dsn string, st *Store, sessions, types []string) (commit func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tenants, ats, data := make([]string, len(sessions)), make([]time.Time, len(sessions)), make([]string, len(sessions))
	for i := range sessions {
		ev, err := json.Marshal(coordination.Event{Time: ms(time.Now()), Type: types[i]})
		if err != nil {
			t.Fatal(err)
		}
		tenants[i], ats[i], data[i] = st.tenant, ms(time.Now()), string(ev)
	}
	if _, err := tx.Exec(ctx, eventsInsert, tenants, sessions, ats, data, st.db.channel); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// waitingOnALock reports whether a backend of the test's database waits on
// a lock, with a statement that writes events.
func waitingOnALock(t *testing.T, st *Store) bool {
	t.Helper()
	var n int
	if err := st.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestAStatusCursorGetsEveryEventOnceWhenTwoReplicasWriteOneSession: two
// replicas append events of one session at once (a run on A, a cancel on
// B). A's write began first but commits last. A status poll between the
// two commits, and one after, each send the events after those the cursor
// counted (the last total-seen of the tail): the poll in between must not
// see B's event before A's, or the cursor, counting, sends B's event twice
// and A's never. The timeline read whole must likewise only ever grow at
// its end.
func TestAStatusCursorGetsEveryEventOnceWhenTwoReplicasWriteOneSession(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaOn(t, dsn, Options{}), replicaOn(t, dsn, Options{})
	ctx := context.Background()
	const id = "two-writers"
	if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendEvent(ctx, id, coordination.Event{Type: "run_started"}); err != nil {
		t.Fatal(err)
	}
	types := func(evs []coordination.Event) []string {
		out := []string{}
		for _, ev := range evs {
			out = append(out, ev.Type)
		}
		return out
	}
	var sent []string
	seen := 0
	poll := func() []string {
		t.Helper()
		tail, total, err := b.EventTail(ctx, id, 10)
		if err != nil {
			t.Fatal(err)
		}
		fresh := min(max(total-seen, 0), len(tail))
		sent = append(sent, types(tail[len(tail)-fresh:])...)
		seen = total
		whole, err := b.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return types(whole)
	}
	poll()
	sent = nil

	commitA := openEventsWrite(t, dsn, a, []string{id}, []string{"step_landed"})
	done := make(chan error, 1)
	go func() { done <- b.AppendEvent(ctx, id, coordination.Event{Type: "cancelled"}) }()
	var bDone bool
	await(t, "B's event written or waiting", func() bool {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			bDone = true
			return true
		default:
			return waitingOnALock(t, b)
		}
	})
	between := poll()
	commitA()
	if !bDone {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("B's event not written 30 s after A's committed")
		}
	}
	after := poll()

	if want := []string{"step_landed", "cancelled"}; !slices.Equal(sent, want) {
		t.Errorf("the status cursor sent %q across the two polls, want %q: each event once, in the order a reader first saw them", sent, want)
	}
	if len(after) < len(between) || !slices.Equal(after[:len(between)], between) {
		t.Errorf("the timeline read %q between the two commits and %q after: an event appeared before one already read", between, after)
	}
}
