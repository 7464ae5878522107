package coordination_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// observed is a sim service with two sessions created, not yet run.
func observed(t *testing.T) (*coordination.Service, string, string) {
	t.Helper()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Parallel: 2, Logger: zerolog.Nop()})
	ids := make([]string, 2)
	for i := range ids {
		seed := int64(i + 1)
		s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Seed: &seed,
			Models: []string{"sim/strong:latency=5ms", "sim:latency=5ms", "sim:latency=5ms"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = s.ID
	}
	return svc, ids[0], ids[1]
}

// read collects a subscription's observations on a goroutine of its own,
// as a caller does, until the subscription is closed.
func read(sub *coordination.Subscription) <-chan []coordination.Observation {
	out := make(chan []coordination.Observation, 1)
	go func() {
		var all []coordination.Observation
		for range sub.Ready() {
			all = append(all, sub.Take()...)
		}
		out <- append(all, sub.Take()...)
	}()
	return out
}

func entries(l *coordination.Ledger) int {
	n := 0
	for _, es := range l.Agents {
		n += len(es)
	}
	return n
}

// TestTheStreamCarriesEveryKindOfTheSessionsItPicks: one subscription hears
// a session's landed entries, its run's progress, its models' activity and
// the store's changes — each with the session's id — and nothing of a
// session it did not pick.
func TestTheStreamCarriesEveryKindOfTheSessionsItPicks(t *testing.T) {
	svc, a, b := observed(t)
	ctx := context.Background()
	sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{a}})
	if err != nil {
		t.Fatal(err)
	}
	got := read(sub)
	for _, id := range []string{a, b} {
		if _, err := svc.Run(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	sub.Close()
	kinds := map[coordination.ObservationKind]int{}
	for _, o := range <-got {
		if o.SessionID != a {
			t.Fatalf("heard session %s, subscribed to %s only: %+v", o.SessionID, a, o)
		}
		kinds[o.Kind]++
		set := 0
		for _, p := range []bool{o.Entry != nil, o.Progress != nil, o.Activity != nil, o.Change != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			t.Fatalf("an observation of kind %s holds %d payloads, want 1: %+v", o.Kind, set, o)
		}
	}
	l, err := svc.Store().Ledger(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if kinds[coordination.ObservedEntry] != entries(l) {
		t.Errorf("heard %d entries, the ledger holds %d", kinds[coordination.ObservedEntry], entries(l))
	}
	for _, k := range []coordination.ObservationKind{coordination.ObservedProgress, coordination.ObservedActivity, coordination.ObservedChange} {
		if kinds[k] == 0 {
			t.Errorf("no %s heard (heard %v)", k, kinds)
		}
	}
}

// TestAFilterOfKindsHearsThoseKindsOnly: a subscription to every session's
// entries (the metrics) hears both sessions' entries and nothing else.
func TestAFilterOfKindsHearsThoseKindsOnly(t *testing.T) {
	svc, a, b := observed(t)
	ctx := context.Background()
	sub, err := svc.Subscribe(ctx, coordination.Filter{Kinds: []coordination.ObservationKind{coordination.ObservedEntry}})
	if err != nil {
		t.Fatal(err)
	}
	got := read(sub)
	want := map[string]int{}
	for _, id := range []string{a, b} {
		if _, err := svc.Run(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		l, err := svc.Store().Ledger(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want[id] = entries(l)
	}
	sub.Close()
	heard := map[string]int{}
	for _, o := range <-got {
		if o.Kind != coordination.ObservedEntry || o.Entry == nil {
			t.Fatalf("heard a %s, subscribed to entries only", o.Kind)
		}
		heard[o.SessionID]++
	}
	if heard[a] != want[a] || heard[b] != want[b] {
		t.Fatalf("entries heard per session %v, the ledgers hold %v", heard, want)
	}
}

// TestASlowSubscriberNeverHoldsUpAStep: subscriptions nobody reads — one
// that keeps everything, one bounded to a single observation — do not slow
// a run: it ends, the first holds every entry, the second one observation
// and a count of what it dropped.
func TestASlowSubscriberNeverHoldsUpAStep(t *testing.T) {
	svc, a, _ := observed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{a}, Kinds: []coordination.ObservationKind{coordination.ObservedEntry}})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	one, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{a}, Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if _, err := svc.Run(ctx, a, nil); err != nil {
		t.Fatalf("a run with subscribers that never read: %v", err)
	}
	l, err := svc.Store().Ledger(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(all.Take()); n != entries(l) {
		t.Errorf("the unbounded subscription kept %d entries, the ledger holds %d", n, entries(l))
	}
	if n := len(one.Take()); n != 1 || one.Dropped() == 0 {
		t.Errorf("the subscription bounded to 1 kept %d and dropped %d", n, one.Dropped())
	}
}

// TestClosingASubscriptionStopsItAndLeavesNoGoroutine: after Close (or the
// end of its context) nothing more is queued, Ready is closed, and the
// store's watch it held is gone with its goroutines.
func TestClosingASubscriptionStopsItAndLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	svc, a, b := observed(t)
	ctx := context.Background()
	closed, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{a}})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	closed.Close() // twice is harmless
	sctx, end := context.WithCancel(ctx)
	ended, err := svc.Subscribe(sctx, coordination.Filter{Sessions: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	end()
	select {
	case <-ended.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription outlived its context")
	}
	if _, err := svc.Run(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	for name, sub := range map[string]*coordination.Subscription{"closed": closed, "ended": ended} {
		if _, open := <-sub.Ready(); open {
			t.Errorf("%s: Ready still open", name)
		}
		if got := sub.Take(); len(got) != 0 {
			t.Errorf("%s: %d observations queued after it ended", name, len(got))
		}
	}
}

// TestChangesCoalesceWhileUnread: a session's changes wait as one Change,
// their flags merged, however many came (the Change contract).
func TestChangesCoalesceWhileUnread(t *testing.T) {
	svc, a, _ := observed(t)
	ctx := context.Background()
	sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{a}, Kinds: []coordination.ObservationKind{coordination.ObservedChange}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := svc.Run(ctx, a, nil); err != nil {
		t.Fatal(err)
	}
	// Read nothing until the run has ended and a change is waiting: every
	// change of its steps and its end was merged into that one.
	<-sub.Ready()
	got := sub.Take()
	if len(got) != 1 {
		t.Fatalf("%d changes were queued for one unread session, want them coalesced into 1", len(got))
	}
	if c := got[0].Change; !c.Steps && !c.Session && !c.Events {
		t.Errorf("the coalesced change names nothing: %+v", c)
	}
}

// TestAFilterTheServiceCannotServeIsRefused: changes come from the store's
// watch of named sessions, and an unknown session cannot be watched.
func TestAFilterTheServiceCannotServeIsRefused(t *testing.T) {
	svc, _, _ := observed(t)
	ctx := context.Background()
	for name, f := range map[string]coordination.Filter{
		"changes of every session": {Kinds: []coordination.ObservationKind{coordination.ObservedChange}},
		"an unknown kind":          {Kinds: []coordination.ObservationKind{"gossip"}},
		"a negative buffer":        {Buffer: -1},
	} {
		if sub, err := svc.Subscribe(ctx, f); !errors.Is(err, coordination.ErrBadInput) {
			sub.Close()
			t.Errorf("%s: err = %v, want ErrBadInput", name, err)
		}
	}
	if _, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{"no_such_session"}}); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("watching an unknown session: err = %v, want ErrSessionNotFound", err)
	}
}
