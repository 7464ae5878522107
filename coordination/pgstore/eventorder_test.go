package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
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
	tx := ownTx(t, dsn)
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
	sessionsOn(t, a, id)
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

// TestTwoReplicasGroupsOfTheSameSessionsDoNotDeadlock: a write of events
// holds each of its sessions' counters until it commits. A group that
// holds s1 and then writes s2 must not meet another holding s2 and
// waiting for s1: every write takes its sessions' counters in (tenant,
// session_id) order, whatever order its events were appended in, so the
// other waits for s1 holding nothing.
func TestTwoReplicasGroupsOfTheSameSessionsDoNotDeadlock(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaOn(t, dsn, Options{}), replicaOn(t, dsn, Options{})
	ctx := context.Background()
	sessionsOn(t, a, "s1", "s2")
	tx := ownTx(t, dsn)
	// A deadlock is found after deadlock_timeout and ends one of the two.
	if _, err := tx.Exec(ctx, `SET LOCAL deadlock_timeout = '100ms'`); err != nil {
		t.Fatal(err)
	}
	write := func(ids ...string) (tenants []string, _ []string, ats []time.Time, data []string) {
		for range ids {
			tenants, ats, data = append(tenants, a.tenant), append(ats, ms(time.Now())), append(data, `{"type":"x"}`)
		}
		return tenants, ids, ats, data
	}
	tenants, ids, ats, data := write("s1")
	if _, err := tx.Exec(ctx, eventsInsert, tenants, ids, ats, data, a.db.channel); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		tenants, ids, ats, data := write("s2", "s1")
		_, err := b.db.pool.Exec(ctx, eventsInsert, tenants, ids, ats, data, b.db.channel)
		done <- err
	}()
	await(t, "B's group waiting for A's", func() bool { return waitingOnALock(t, b) })
	tenants, ids, ats, data = write("s2")
	if _, err := tx.Exec(ctx, eventsInsert, tenants, ids, ats, data, a.db.channel); err != nil {
		t.Fatalf("A's second write, while B's group of s2 and s1 waits: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("B's group: %v", err)
	}
	for _, id := range []string{"s1", "s2"} {
		var ns []int64
		rows, err := tx.Conn().Query(ctx, `SELECT n FROM events WHERE tenant = $1 AND session_id = $2 ORDER BY n`, a.tenant, id)
		if err == nil {
			ns, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		if err != nil || !slices.Equal(ns, []int64{1, 2}) {
			t.Errorf("session %s's events are numbered %v (%v), want [1 2]", id, ns, err)
		}
	}
}

// TestEventsStoredBeforeMigration23KeepTheirOrder: a database whose events
// were numbered by one sequence for every session is renumbered, each
// session's events 1 to k in their old order, for each tenant apart; the
// count a status poll reads is k, and the next event is k+1.
func TestEventsStoredBeforeMigration23KeepTheirOrder(t *testing.T) {
	dsn, conn := schemaBelow(t, 23)
	ctx := context.Background()
	// Two tenants' sessions of the same ids, their events interleaved in
	// the one sequence.
	tenants := []string{coordination.DefaultTenant, "acme"}
	for _, tenant := range tenants {
		for _, id := range []string{"s1", "s2"} {
			setup, err := json.Marshal(storetest.NewSession(id))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, `INSERT INTO sessions (tenant, id, created_at, setup) VALUES ($1, $2, now(), $3)`, tenant, id, setup); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := conn.Exec(ctx, `SELECT setval('events_n_seq', 40)`); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		for _, tenant := range tenants {
			for _, id := range []string{"s2", "s1"} {
				ev := fmt.Sprintf(`{"type":"%s.%s.%d"}`, tenant, id, i)
				if _, err := conn.Exec(ctx, `INSERT INTO events (tenant, session_id, at, event) VALUES ($1, $2, now(), $3)`, tenant, id, ev); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	db, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tenant := range tenants {
		cs, err := db.For(tenant)
		if err != nil {
			t.Fatal(err)
		}
		st := cs.(*Store)
		for _, id := range []string{"s1", "s2"} {
			var want []string
			for i := range 6 {
				want = append(want, fmt.Sprintf("%s.%s.%d", tenant, id, i))
			}
			if err := st.AppendEvent(ctx, id, coordination.Event{Type: "after"}); err != nil {
				t.Fatal(err)
			}
			want = append(want, "after")
			evs, err := st.Events(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				got = append(got, ev.Type)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s/%s's timeline after the migration: %q, want %q", tenant, id, got, want)
			}
			tail, total, err := st.EventTail(ctx, id, 2)
			if err != nil || total != 7 || len(tail) != 2 || tail[0].Type != want[5] || tail[1].Type != "after" {
				t.Errorf("%s/%s's tail after the migration: %d events, %v (%v); want 7, ending %q, %q", tenant, id, total, tail, err, want[5], "after")
			}
			var ns []int64
			rows, err := conn.Query(ctx, `SELECT n FROM events WHERE tenant = $1 AND session_id = $2 ORDER BY n`, tenant, id)
			if err == nil {
				ns, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			}
			if err != nil || !slices.Equal(ns, []int64{1, 2, 3, 4, 5, 6, 7}) {
				t.Errorf("%s/%s's events are numbered %v (%v), want 1 to 7", tenant, id, ns, err)
			}
		}
	}
}
