package pgstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The session lock's callers in one process (one DB) queue on a channel,
// so only the first of them polls the database while another replica
// holds the lock. A holder that lets it go while another caller here waits
// passes it on instead (pass): its row stays, with its token, and the
// waiter holds it without a round trip, where the let-go's delete and the
// waiter's take were one each. A round's landings queue on the session
// lock (cancelfence.go's lockLanding), so most of them found it held.
//
// A lock passed on is the same as one holder holding it the longer: the
// row is this process's throughout, renewed by the heartbeat, and no other
// replica can take it meanwhile. What a fresh take would find out and a
// pass does not is bounded: a lock passes on only while its row's take,
// sent less than passFor ago, set an expiry that has not come, however
// the renewals went; only while no reap can have expired the row sooner
// (standing.go: a beat that found this replica's registration standing
// since the take was sent less than reapSilent ago), for a reap comes
// after reapSilent of silent beats, not after the row's TTL, and the
// heartbeat learns of it only at its next renewal that reaches the
// database; only while no outage was seen since the take, for a crash or
// a failover empties the unlogged locks table, another replica may insert
// the row as the database answers again, and the heartbeat, unable to put
// it back, keeps the token; only while the heartbeat still holds its token
// (one it found reaped it forgets); only passMax times in a row, so
// another replica polling for it is not kept waiting by a busy one; and
// never after the session was deleted under it (DeleteSessionSized
// forgets its rows), lest a session made again under the same id be
// locked twice.
//
// A take or let-go that does go to the database goes with the others of
// this replica's sessions made meanwhile, one statement for the group
// (sessiontakes.go); a lock passes on as before, the group being only how
// its row is written.

// sessionGates keeps the waiters for each session lock this process is
// taking, by tenant/id.
type sessionGates struct {
	mu    sync.Mutex
	gates map[string]*gate // tenant/id
}

// gate is one session lock's queue in this process: the channel's one
// slot is held by the caller holding or taking the lock.
type gate struct {
	ch     chan struct{}
	refs   int      // callers between get and put
	passed *passing // a lock let go to the next caller to get the slot; nil: none
	// yieldTill is when the next caller here may take the lock again
	// after a let-go at the pass cap (yield).
	yieldTill time.Time
}

// passing is a session lock on its way from holder to holder in this
// process.
type passing struct {
	token string
	sent  time.Time // when the take that wrote its row was sent (this process's clock)
	n     int       // holders it passed to since that take
}

const (
	// passFor is how long after its take a session lock passes on: half
	// the row's TTL, so a holder that gets it has at least as long before
	// the row could run out unrenewed.
	passFor = lockTTL / 2
	// passMax is how many holders in a row a session lock passes to
	// before it is let go for the other replicas' takes.
	passMax = 8
	// passYield is how long the next caller here waits before taking the
	// lock again after a let-go at the cap: longer than another replica's
	// poll (sessionPoll), so one polling for it takes it. Taken at once, the
	// lock reached another replica only when its poll fell in the round
	// trip between the let-go and the take.
	passYield = 2 * sessionPoll
)

func (g *sessionGates) get(key string) *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.gates[key]
	if gt == nil {
		gt = &gate{ch: make(chan struct{}, 1)}
		g.gates[key] = gt
	}
	gt.refs++
	return gt
}

// put drops a reference, and the gate with the last one, so the map holds
// only sessions someone is locking. A lock passed to callers that all gave
// up comes back, for the last one to let go.
func (g *sessionGates) put(key string, gt *gate) *passing {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gt.refs--; gt.refs > 0 {
		return nil
	}
	delete(g.gates, key)
	p := gt.passed
	gt.passed = nil
	return p
}

// pass leaves p at the gate for the next caller, if one is queued there;
// false: none is, and the holder lets the lock go.
func (g *sessionGates) pass(gt *gate, p *passing) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gt.refs < 2 {
		return false
	}
	gt.passed = p
	return true
}

// yield has the next caller queued at gt, if any, wait passYield before
// taking the lock let go at the pass cap.
func (g *sessionGates) yield(gt *gate) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gt.refs >= 2 {
		gt.yieldTill = time.Now().Add(passYield)
	}
}

// yielding is how long the caller that got gt's slot waits before taking
// the lock (yield).
func (g *sessionGates) yielding(gt *gate) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Until(gt.yieldTill)
}

// received takes the lock passed at the gate, if any: called by the
// caller that got its slot.
func (g *sessionGates) received(gt *gate) *passing {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := gt.passed
	gt.passed = nil
	return p
}

// sessionPoll is how often a waiter asks again for a session lock another
// replica holds.
const sessionPoll = 15 * time.Millisecond

// LockSession blocks until it holds the session lock or ctx ends. A free
// lock is taken even when ctx has ended, as in the file store: the entry
// recording a cancellation is written under it.
func (s *Store) LockSession(ctx context.Context, id string) (func(), error) {
	if err := coordination.CheckSessionID(id); err != nil {
		return nil, err
	}
	key := s.tenant + "/" + id
	gt := s.db.gates.get(key)
	select {
	case gt.ch <- struct{}{}:
	default:
		select {
		case gt.ch <- struct{}{}:
		case <-ctx.Done():
			s.putGate(id, key, gt)
			return nil, fmt.Errorf("gave up waiting for the session lock of %q: %w", id, ctx.Err())
		}
	}
	leave := func() { <-gt.ch; s.putGate(id, key, gt) }
	if p := s.db.gates.received(gt); p != nil {
		if s.passable(p) {
			return s.sessionUnlock(id, key, gt, p), nil
		}
		s.letGoSession(id, p.token) // taken afresh below
	}
	if d := s.db.gates.yielding(gt); d > 0 {
		// A caller that gave up takes a free lock all the same: it stops
		// yielding.
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	bg := context.WithoutCancel(ctx)
	for {
		sent := time.Now()
		token, err := s.takeSession(bg, id)
		if err != nil {
			leave()
			return nil, err
		}
		if token != "" {
			return s.sessionUnlock(id, key, gt, &passing{token: token, sent: sent}), nil
		}
		select {
		case <-ctx.Done():
			leave()
			return nil, fmt.Errorf("gave up waiting for the session lock of %q, held by another replica: %w", id, ctx.Err())
		case <-time.After(sessionPoll):
		}
	}
}

// passable tells whether the session lock p may pass to one more holder.
// A replica never registered (a command's open, a role that may not write
// the replicas table) is never reaped.
func (s *Store) passable(p *passing) bool {
	return p.n < passMax && time.Since(p.sent) < passFor && s.db.held.holds(s.tenant, p.token) &&
		!(s.db.registered.Load() && s.db.standing.reapable(p.sent)) && !s.db.outage.since(p.sent)
}

// sessionUnlock is the let-go of the session lock p held at gt: passed to
// the next caller queued there, or let go.
func (s *Store) sessionUnlock(id, key string, gt *gate, p *passing) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			next := &passing{token: p.token, sent: p.sent, n: p.n + 1}
			if !s.passable(next) || !s.db.gates.pass(gt, next) {
				s.letGoSession(id, p.token)
				if next.n >= passMax {
					s.db.gates.yield(gt)
				}
			}
			<-gt.ch
			s.putGate(id, key, gt)
		})
	}
}

// putGate drops the caller's reference to gt, letting go a lock passed to
// callers that all gave up.
func (s *Store) putGate(id, key string, gt *gate) {
	if p := s.db.gates.put(key, gt); p != nil {
		s.letGoSession(id, p.token)
	}
}
