package coordination

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Observation is one thing a Service tells its subscribers about a session:
// the one way to hear a session (raft's observer is the model). Exactly one
// of Entry, Progress, Activity and Change is set, as Kind says.
type Observation struct {
	SessionID string
	Kind      ObservationKind
	// Entry is an agent's entry a step of this service landed in the
	// ledger (ObservedEntry): answers, votes, errors.
	Entry *Entry
	// Progress is what a run of this service tells a waiting caller
	// (ObservedProgress).
	Progress *Progress
	// Activity is a model's streamed text or a retry it waits for, in a
	// step of this service (ObservedActivity).
	Activity *Activity
	// Change is the store's word that the session's record grew, whichever
	// process wrote it (ObservedChange).
	Change *Change
}

// ObservationKind says what an Observation holds.
type ObservationKind string

// The kinds of observation.
const (
	ObservedEntry    ObservationKind = "entry"
	ObservedProgress ObservationKind = "progress"
	ObservedActivity ObservationKind = "activity"
	// ObservedChange comes from the store's watch (Store.Watch), so it is
	// heard only for the sessions a Filter names.
	ObservedChange ObservationKind = "change"
)

var observationKinds = []ObservationKind{ObservedEntry, ObservedProgress, ObservedActivity, ObservedChange}

// Filter picks what a subscription hears.
type Filter struct {
	// Sessions limits the subscription to these sessions; empty hears every
	// session of the service (and no ObservedChange).
	Sessions []string
	// Kinds limits it to these kinds; empty hears every kind.
	Kinds []ObservationKind
	// Buffer is how many observations may wait unread. 0 keeps every one:
	// nothing is dropped, and memory grows while the reader lags (metrics
	// counts, progress printed line by line). n > 0 keeps at most n and
	// drops what comes beyond (Subscription.Dropped counts them): for live
	// views, which draw what stands rather than every piece. Either way a
	// session's Changes coalesce into the one still unread (see Change).
	Buffer int
}

// Subscription is a filtered stream of observations. Publishing never
// waits for its reader: a step, a run's loop or a model's stream hands an
// observation over and goes on.
//
// Read it by taking what waits whenever Ready fires:
//
//	for range sub.Ready() {
//		for _, o := range sub.Take() { … }
//	}
//
// The loop ends once the subscription is closed and what waited is taken.
type Subscription struct {
	svc      *Service
	sessions map[string]bool // nil: every session
	kinds    map[ObservationKind]bool
	limit    int

	mu      sync.Mutex
	queue   []Observation
	closed  bool
	dropped uint64
	ready   chan struct{} // holds one signal while queue is not empty; closed by Close

	stopWatch context.CancelFunc // ends the store's watches (ObservedChange)
	watching  sync.WaitGroup     // the goroutines that forward them
	stopAfter func() bool        // unregisters the close at the end of the context
}

// Subscribe starts a subscription that hears what f picks until it is
// closed or ctx ends. Observations published before Subscribe returns are
// not heard: subscribe before starting what you want to hear (a run can end
// before a later Subscribe). It fails only for a filter it cannot serve, or
// when the store cannot watch a session it names for ObservedChange (an
// unknown session: ErrSessionNotFound).
func (svc *Service) Subscribe(ctx context.Context, f Filter) (*Subscription, error) {
	sub := &Subscription{svc: svc, kinds: map[ObservationKind]bool{}, limit: f.Buffer, ready: make(chan struct{}, 1)}
	for _, k := range f.Kinds {
		if !slices.Contains(observationKinds, k) {
			return nil, fmt.Errorf("%w: no observation is of kind %q; the kinds are %v", ErrBadInput, k, observationKinds)
		}
		sub.kinds[k] = true
	}
	if len(f.Kinds) == 0 {
		for _, k := range observationKinds {
			sub.kinds[k] = len(f.Sessions) > 0 || k != ObservedChange
		}
	} else if sub.kinds[ObservedChange] && len(f.Sessions) == 0 {
		return nil, fmt.Errorf("%w: changes come from the store's watch of one session at a time; name the sessions to watch", ErrBadInput)
	}
	if f.Buffer < 0 {
		return nil, fmt.Errorf("%w: a subscription's buffer cannot be negative (%d); 0 keeps every observation", ErrBadInput, f.Buffer)
	}
	if len(f.Sessions) > 0 {
		sub.sessions = make(map[string]bool, len(f.Sessions))
		for _, id := range f.Sessions {
			sub.sessions[id] = true
		}
	}
	wctx, stop := context.WithCancel(ctx)
	sub.stopWatch = stop
	if sub.kinds[ObservedChange] {
		for id := range sub.sessions {
			if err := sub.watch(wctx, id); err != nil {
				stop()
				sub.watching.Wait()
				return nil, err
			}
		}
	}
	svc.subs.add(sub)
	stopAfter := context.AfterFunc(ctx, sub.Close)
	sub.mu.Lock()
	sub.stopAfter = stopAfter
	sub.mu.Unlock()
	return sub, nil
}

// watch forwards the store's changes to one session into the subscription
// until the watch ends.
func (sub *Subscription) watch(ctx context.Context, id string) error {
	ch, err := sub.svc.store.Watch(ctx, id)
	if err != nil {
		return err
	}
	sub.watching.Add(1)
	go func() {
		defer sub.watching.Done()
		for c := range ch {
			sub.push(Observation{SessionID: id, Kind: ObservedChange, Change: &c})
		}
	}()
	return nil
}

// Ready receives a signal whenever observations wait to be taken, and is
// closed once the subscription is (what waited may still be taken). A nil
// subscription is never ready.
func (sub *Subscription) Ready() <-chan struct{} {
	if sub == nil {
		return nil
	}
	return sub.ready
}

// Take returns every observation waiting, oldest first, and empties the
// queue.
func (sub *Subscription) Take() []Observation {
	if sub == nil {
		return nil
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	q := sub.queue
	sub.queue = nil
	return q
}

// Dropped is how many observations a bounded subscription dropped (see
// Filter.Buffer).
func (sub *Subscription) Dropped() uint64 {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.dropped
}

// Close ends the subscription: nothing more is queued, Ready is closed,
// and the store's watches it held have stopped when Close returns. What
// waited may still be taken. Closing twice, or a nil subscription, does
// nothing.
func (sub *Subscription) Close() {
	if sub == nil {
		return
	}
	sub.svc.subs.remove(sub)
	sub.mu.Lock()
	if !sub.closed {
		sub.closed = true
		close(sub.ready)
	}
	stopAfter := sub.stopAfter
	sub.mu.Unlock()
	sub.stopWatch()
	sub.watching.Wait()
	if stopAfter != nil {
		stopAfter()
	}
}

// hears tells whether the subscription picks observations of kind about a
// session.
func (sub *Subscription) hears(id string, kind ObservationKind) bool {
	return sub.kinds[kind] && (sub.sessions == nil || sub.sessions[id])
}

// push queues one observation, never waiting for the reader.
func (sub *Subscription) push(o Observation) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return
	}
	if o.Kind == ObservedChange {
		for i := range sub.queue {
			if q := &sub.queue[i]; q.Kind == ObservedChange && q.SessionID == o.SessionID {
				c := q.Change.or(*o.Change)
				q.Change = &c
				return // a signal is pending: the queue was not taken since
			}
		}
	}
	if sub.limit > 0 && len(sub.queue) >= sub.limit {
		sub.dropped++
		return
	}
	sub.queue = append(sub.queue, o)
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

// subscribers are a service's subscriptions: copied on write, so that
// publishing — on every step, every streamed piece — reads them without a
// lock, and costs nothing when nobody listens.
type subscribers struct {
	mu   sync.Mutex // serialises writers
	list atomic.Pointer[[]*Subscription]
}

func (s *subscribers) load() []*Subscription {
	if p := s.list.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *subscribers) add(sub *Subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := append(slices.Clip(s.load()), sub)
	s.list.Store(&next)
}

func (s *subscribers) remove(sub *Subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.load()
	if i := slices.Index(old, sub); i >= 0 {
		next := slices.Delete(slices.Clone(old), i, i+1)
		s.list.Store(&next)
	}
}

// hears tells whether any subscription picks observations of kind about a
// session, so that what nobody reads is not built (1,000 sessions run
// unobserved in the benchmarks).
func (svc *Service) hears(id string, kind ObservationKind) bool {
	for _, sub := range svc.subs.load() {
		if sub.hears(id, kind) {
			return true
		}
	}
	return false
}

// publish hands an observation to every subscription that picks it.
func (svc *Service) publish(o Observation) {
	for _, sub := range svc.subs.load() {
		if sub.hears(o.SessionID, o.Kind) {
			sub.push(o)
		}
	}
}

// RunsActive is the number of run loops running in this process.
func (svc *Service) RunsActive() int {
	return svc.runs.count()
}
