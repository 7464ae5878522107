package coordination

import (
	"context"
	"sync"
)

// Change tells a watcher that a session's stored record grew. Changes
// coalesce: a watcher slow to read gets one Change standing for every change
// since its last read (its flags OR-ed), so a watcher re-reads what it shows
// (Service.Status, the store's ledger) rather than applying deltas. A Change
// may also come when nothing it names is new (a store that polls, a watch
// just set up): reading again is always right.
type Change struct {
	// Steps: an agent's step landed (an answer, a vote or an error).
	Steps bool
	// Session: a session entry landed (re-vote, decided, finished,
	// cancelled, resumed).
	Session bool
	// Events: the timeline grew (a step started, …).
	Events bool
	// Permissions: an agent asked a person (the file handshake's
	// requests/), an ask was answered (responses/), or a decision was
	// recorded (permissions.jsonl). Only a store that keeps them reports it.
	Permissions bool
}

// Ledger tells whether the change touched the ledger (a step or a session
// entry).
func (c Change) Ledger() bool { return c.Steps || c.Session }

func (c Change) or(d Change) Change {
	return Change{Steps: c.Steps || d.Steps, Session: c.Session || d.Session, Events: c.Events || d.Events, Permissions: c.Permissions || d.Permissions}
}

// Feed fans a session's changes out to its watchers, for stores: Publish
// never blocks (each watcher holds at most one pending, coalesced Change),
// and a watcher's channel closes when its context ends. The zero value is
// ready to use.
type Feed struct {
	mu   sync.Mutex
	subs map[chan Change]struct{}
}

// Subscribe returns a channel that receives the feed's changes until ctx
// ends; it is then closed. onClose, if set, runs after it is closed (a store
// drops an idle watch there).
func (f *Feed) Subscribe(ctx context.Context, onClose func()) <-chan Change {
	ch := make(chan Change, 1)
	f.mu.Lock()
	if f.subs == nil {
		f.subs = make(map[chan Change]struct{})
	}
	f.subs[ch] = struct{}{}
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.subs, ch)
		close(ch)
		f.mu.Unlock()
		if onClose != nil {
			onClose()
		}
	})
	return ch
}

// Publish hands c to every watcher, merging it into one still unread.
func (f *Feed) Publish(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		// Every send happens under f.mu, so after taking the unread change
		// out the channel has room.
		select {
		case ch <- c:
		default:
			select {
			case old := <-ch:
				ch <- old.or(c)
			default:
				ch <- c
			}
		}
	}
}

// Watchers is how many watchers the feed has.
func (f *Feed) Watchers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}
