package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// watchWithin is how long a watch may take to report a change: the store
// contract says within a second; twice that keeps a loaded machine green.
const watchWithin = 2 * time.Second

// watchCases are the suite's cases for Store.Watch (in EventCases).
var watchCases = []Case{
	{"WatchReportsStepsSessionEntriesAndEvents", testWatchReports},
	{"WatchersOfOneSessionEachSeeEveryChange", testWatchShared},
	{"WatchOfOtherSessionsStaysQuiet", testWatchQuiet},
	{"WatchSeesAStepMadeTheMomentItReturns", testWatchFromReturn},
	{"WatchClosesWhenItsContextEnds", testWatchCloses},
	{"WatchOfUnknownSessionIsNotFound", testWatchNotFound},
}

// AwaitChange reads ch until the changes seen together cover want, failing
// the test after watchWithin.
func AwaitChange(t *testing.T, ch <-chan coordination.Change, want coordination.Change) {
	t.Helper()
	deadline := time.After(watchWithin)
	var seen coordination.Change
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("the watch closed before reporting %+v (saw %+v)", want, seen)
			}
			seen = coordination.Change{Steps: seen.Steps || c.Steps, Session: seen.Session || c.Session, Events: seen.Events || c.Events, Permissions: seen.Permissions || c.Permissions}
			if (!want.Steps || seen.Steps) && (!want.Session || seen.Session) && (!want.Events || seen.Events) && (!want.Permissions || seen.Permissions) {
				return
			}
		case <-deadline:
			t.Fatalf("no change %+v reported within %v (saw %+v)", want, watchWithin, seen)
		}
	}
}

func watch(t *testing.T, st coordination.Store, id string) <-chan coordination.Change {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := st.Watch(ctx, id)
	if err != nil {
		t.Fatalf("Watch(%q): %v", id, err)
	}
	return ch
}

func testWatchReports(t *testing.T, st coordination.Store) {
	create(t, st, "w1")
	ch := watch(t, st, "w1")
	ctx := context.Background()
	step(t, st, "w1", answer("agent_a", "first"))
	AwaitChange(t, ch, coordination.Change{Steps: true})
	if _, err := st.AppendSession(ctx, "w1", coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	AwaitChange(t, ch, coordination.Change{Session: true})
	if err := st.AppendEvent(ctx, "w1", coordination.Event{Type: "step_started", Message: "agent_b is working"}); err != nil {
		t.Fatal(err)
	}
	AwaitChange(t, ch, coordination.Change{Events: true})
	// A watcher that does not read is not lost and does not block writers:
	// its pending changes merge.
	step(t, st, "w1", answer("agent_b", "second"))
	if _, err := st.AppendSession(ctx, "w1", coordination.SessionEntry{Kind: coordination.SessionResumed}); err != nil {
		t.Fatal(err)
	}
	step(t, st, "w1", answer("agent_c", "third"))
	AwaitChange(t, ch, coordination.Change{Steps: true, Session: true})
}

func testWatchShared(t *testing.T, st coordination.Store) {
	create(t, st, "w1")
	a, b := watch(t, st, "w1"), watch(t, st, "w1")
	step(t, st, "w1", answer("agent_a", "first"))
	AwaitChange(t, a, coordination.Change{Steps: true})
	AwaitChange(t, b, coordination.Change{Steps: true})
}

func testWatchQuiet(t *testing.T, st coordination.Store) {
	create(t, st, "w1")
	create(t, st, "w2")
	ch := watch(t, st, "w1")
	step(t, st, "w2", answer("agent_a", "elsewhere"))
	other := watch(t, st, "w2")
	step(t, st, "w2", answer("agent_b", "elsewhere too"))
	AwaitChange(t, other, coordination.Change{Steps: true})
	select {
	case c := <-ch:
		if c.Ledger() {
			t.Fatalf("a watch of w1 reported %+v for steps of w2", c)
		}
	case <-time.After(100 * time.Millisecond):
	}
}

// testWatchFromReturn: a watch covers every change made after Watch
// returns, however soon; a store that takes its first look later (a poll
// starting in the background) misses a step written at once. Ten sessions,
// since such a miss is a race.
func testWatchFromReturn(t *testing.T, st coordination.Store) {
	for i := range 10 {
		id := fmt.Sprintf("r%d", i)
		create(t, st, id)
		ch := watch(t, st, id)
		step(t, st, id, answer("agent_a", "at once"))
		AwaitChange(t, ch, coordination.Change{Steps: true})
	}
}

func testWatchCloses(t *testing.T, st coordination.Store) {
	create(t, st, "w1")
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := st.Watch(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.After(watchWithin)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				// Writers go on unhindered with nobody watching.
				step(t, st, "w1", answer("agent_a", "after"))
				return
			}
		case <-deadline:
			t.Fatal("the watch stayed open after its context ended")
		}
	}
}

func testWatchNotFound(t *testing.T, st coordination.Store) {
	_, err := st.Watch(context.Background(), "nope")
	if !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("Watch of a missing session: %v, want ErrSessionNotFound", err)
	}
}

// RunWatch runs only the suite's watch cases (Run includes them): for a
// store that watches in more than one way, each way.
func RunWatch(t *testing.T, open func(t *testing.T) coordination.Store) {
	RunCases(t, open, watchCases)
}
