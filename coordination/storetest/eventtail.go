package storetest

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// testEventTail checks a store's EventTail against its whole timeline: the
// latest n events, oldest first, and the count of them all; a session
// that is not there is ErrSessionNotFound, as for Events.
func testEventTail(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	et, ok := st.(coordination.EventTail)
	if !ok {
		t.Skip("this store has no EventTail reader")
	}
	if _, _, err := et.EventTail(ctx, "absent", 5); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("EventTail of a session that is not there: %v, want ErrSessionNotFound", err)
	}
	create(t, st, "s")
	evs, total, err := et.EventTail(ctx, "s", 5)
	if err != nil || len(evs) != 0 || total != 0 {
		t.Fatalf("EventTail of a new session = %v, %d, %v; want none, 0", evs, total, err)
	}
	// Another session's events are not counted.
	create(t, st, "other")
	if err := st.AppendEvent(ctx, "other", coordination.Event{Type: "x"}); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := st.AppendEvent(ctx, "s", coordination.Event{Type: "step_landed", Step: i, Message: "event " + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ n, first, want int }{{5, 7, 5}, {12, 0, 12}, {20, 0, 12}} {
		evs, total, err := et.EventTail(ctx, "s", c.n)
		if err != nil {
			t.Fatal(err)
		}
		if total != 12 || len(evs) != c.want {
			t.Fatalf("EventTail(%d) = %d events of %d; want %d of 12", c.n, len(evs), total, c.want)
		}
		for i, ev := range evs {
			if ev.Step != c.first+i || ev.Message != "event "+strconv.Itoa(c.first+i) {
				t.Fatalf("EventTail(%d)[%d] = step %d %q; want step %d, oldest first", c.n, i, ev.Step, ev.Message, c.first+i)
			}
		}
	}
}
