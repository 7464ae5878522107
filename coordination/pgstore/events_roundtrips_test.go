package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// await waits until cond holds, failing the test after 30 s.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// leadHeld starts an event of session id whose write waits on holdTable(…, "events"):
// the events appended after it gather for the next write. It returns the
// event's answer.
func leadHeld(t *testing.T, st *Store, c *RoundTrips, id string) <-chan error {
	t.Helper()
	before := c.Count()
	done := make(chan error, 1)
	go func() { done <- st.AppendEvent(context.Background(), id, coordination.Event{Type: "lead"}) }()
	await(t, "the first event's write sent", func() bool { return c.Count() > before })
	return done
}

// TestEventsAppendedTogetherAreOneRoundTrip: events appended while a write
// of events is in flight go in the next one, one round trip however many
// sessions they are of, each written (a caller whose context ended too,
// as before) and each session's watchers on another replica told.
func TestEventsAppendedTogetherAreOneRoundTrip(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &RoundTrips{}
	a := countedReplica(t, dsn, c)
	b := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	const sessions, each = 50, 4
	for i := range sessions {
		sessionsOn(t, a, fmt.Sprintf("s%d", i))
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	watched := map[string]<-chan coordination.Change{}
	for _, id := range []string{"s1", "s49"} {
		ch, err := b.Watch(wctx, id)
		if err != nil {
			t.Fatal(err)
		}
		watched[id] = ch
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()

	release := holdTable(t, dsn, "events")
	before := c.Count()
	lead := leadHeld(t, a, c, "s0")
	var wg sync.WaitGroup
	errs := make(chan error, sessions*each)
	for i := range sessions * each {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cx := ctx
			if i%2 == 1 {
				cx = ended
			}
			errs <- a.AppendEvent(cx, fmt.Sprintf("s%d", i%sessions), coordination.Event{Type: "step_started", Step: i})
		}()
	}
	await(t, "every event waiting for the next write", func() bool { return a.db.events.waiting() == sessions*each })
	release()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := c.Count() - before; n != 2 {
		t.Errorf("%d events took %d round trips, want 2 (the one in flight, then all the others together)", sessions*each+1, n)
	}
	for id, ch := range watched {
		t.Run("watch "+id, func(t *testing.T) { storetest.AwaitChange(t, ch, coordination.Change{Events: true}) })
	}
	for i := range sessions {
		evs, err := b.Events(ctx, fmt.Sprintf("s%d", i))
		want := each
		if i == 0 {
			want++
		}
		if err != nil || len(evs) != want {
			t.Errorf("s%d has %d events (%v), want %d", i, len(evs), err, want)
		}
	}
	if a.db.events.writing != 0 || a.db.events.waiting() != 0 {
		t.Error("the group writer still leads or holds events once every call returned")
	}
}

// TestAGroupKeepsEachSessionsOrder: a session's events are numbered in the
// order they were appended, within a group as between groups.
func TestAGroupKeepsEachSessionsOrder(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &RoundTrips{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	ids := []string{"s0", "s1", "s2"}
	sessionsOn(t, a, ids...)
	// Before the group, one at a time: each written before the next.
	for step := range 3 {
		if err := a.AppendEvent(ctx, "s1", coordination.Event{Type: "before", Step: step}); err != nil {
			t.Fatal(err)
		}
	}
	release := holdTable(t, dsn, "events")
	lead := leadHeld(t, a, c, "s0")
	const n = 60
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.AppendEvent(ctx, ids[(i*7)%len(ids)], coordination.Event{Type: "grouped", Step: 3 + i}); err != nil {
				t.Error(err)
			}
		}()
		await(t, "the event queued", func() bool { return a.db.events.waiting() == i+1 })
	}
	release()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, id := range ids {
		if err := a.AppendEvent(ctx, id, coordination.Event{Type: "after", Step: 3 + n}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		evs, err := a.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var steps []int
		for _, ev := range evs {
			if ev.Type != "lead" {
				steps = append(steps, ev.Step)
			}
		}
		for i := 1; i < len(steps); i++ {
			if steps[i] <= steps[i-1] {
				t.Errorf("%s's events in the order %v; want them as appended", id, steps)
				break
			}
		}
	}
}

// TestAFailingEventFailsAlone: an event of a session not stored is not
// found while the rest of its group is written; one PostgreSQL refuses
// (here a trigger refuses it) fails the group's statement, and the group
// is written again one event at a time, so only that event fails and the
// others keep their order.
func TestAFailingEventFailsAlone(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &RoundTrips{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	sessionsOn(t, a, "s0", "s1", "s2")
	if _, err := a.db.pool.Exec(ctx, `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.event->>'type' = 'poison' THEN RAISE EXCEPTION 'a poisoned event'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_poison()`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		id, typ string
		want    func(error) bool
	}{
		{"s1", "first", func(err error) bool { return err == nil }},
		{"missing", "lost", func(err error) bool { return errors.Is(err, coordination.ErrSessionNotFound) }},
		{"s2", "poison", func(err error) bool { return err != nil && strings.Contains(err.Error(), "a poisoned event") }},
		{"s1", "second", func(err error) bool { return err == nil }},
		{"s2", "kept", func(err error) bool { return err == nil }},
	}
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprintf("grouped=%v", grouped), func(t *testing.T) {
			var release func()
			var lead <-chan error
			if grouped {
				release = holdTable(t, dsn, "events")
				lead = leadHeld(t, a, c, "s0")
			}
			errs := make([]chan error, len(cases))
			for i, tc := range cases {
				errs[i] = make(chan error, 1)
				go func() {
					errs[i] <- a.AppendEvent(ctx, tc.id, coordination.Event{Type: tc.typ, Message: fmt.Sprint(grouped)})
				}()
				if grouped {
					await(t, "the event queued", func() bool { return a.db.events.waiting() == i+1 })
				} else if err := <-errs[i]; !tc.want(err) {
					t.Errorf("appending %s's %s event alone: %v", tc.id, tc.typ, err)
				}
			}
			if !grouped {
				return
			}
			release()
			if err := <-lead; err != nil {
				t.Fatal(err)
			}
			for i, tc := range cases {
				if err := <-errs[i]; !tc.want(err) {
					t.Errorf("appending %s's %s event in a group: %v", tc.id, tc.typ, err)
				}
			}
		})
	}
	for id, want := range map[string]string{"s1": "first second first second", "s2": "kept kept"} {
		evs, err := a.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, ev.Type)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s's timeline %v, want %s", id, got, want)
		}
	}
}
