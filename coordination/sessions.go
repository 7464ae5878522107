package coordination

import (
	"context"
	"sync"
	"time"
)

// sessions reads sessions' setups and ledgers and derives their states,
// keeping what a live session needs to be read again cheaply: its setup
// (setups), its latest derivation (derived), whether it was tidied for
// writing here (tidied) and the lock of one Start at a time (starts).
// Each cache is bounded (Service says why).
type sessions struct {
	store   Store
	reviews Reviews // given to every setup read (review.go)

	// setups: id → *Session, the setups of sessions with a step (then they
	// never change) or a run (which holds the run lock). Kept while the
	// session is live: a derivation that finds it ended lets it go
	// (forgetEnded), and the cap bounds live sessions nobody finishes here.
	setups *lru[string, *Session]
	// derived: id → *deriveMemo, the latest derivation from a lent ledger:
	// only running sessions keep one (derivememo.go), let go when their run
	// ends; the cap bounds running sessions nobody steps again.
	derived *lru[string, *deriveMemo]
	// tidied: id → struct{}, the sessions opened for writing (openOnce).
	// Capped by size, not let go when a session ends, so calls that a
	// finished session refuses do not tidy it again each time: one let go is
	// tidied again before its next write, as after a restart.
	tidied *lru[string, struct{}]
	// holds: id → the holds on its budget (SpendHold) that the latest
	// read with the step locks found (StateLender), kept only while there
	// are any: a run's launch counts those of other processes (run.go,
	// heldRead) without a read of its own. The cap bounds sessions whose
	// holds were seen and that nobody reads again.
	holds *lru[string, heldAt]
	// heldMu makes heldNow's look and put one step; asked numbers the
	// reads with holds as they are asked (heldAt.asked).
	heldMu sync.Mutex
	asked  uint64
	// starts: id → the mutex of one Start at a time per session here
	// (starting), held by each start that waits or runs and gone after the
	// last: never let go while locked or waited on.
	starts held[string, sync.Mutex]
}

func newSessions(store Store, reviews Reviews) *sessions {
	return &sessions{store: store, reviews: reviews, setups: newLRU[string, *Session](setupsMax),
		derived: newLRU[string, *deriveMemo](derivedMax), tidied: newLRU[string, struct{}](tidiedMax), holds: newLRU[string, heldAt](heldMax)}
}

// get reads a session's setup. Once an agent has stepped the setup never
// changes (criteria can be attached only before the first step), so load
// caches it from then on while the session is live, and so does a run while
// it holds the run lock; before that it is read afresh, so criteria that
// another process attaches are seen. A MassGen-written one is never cached.
//
// On a store other processes share (Births) a kept setup is served only
// while the session stored under its id is the one it was read from: a
// session pruned by another process and made again under its id there
// has its own task and team, which another replica would otherwise serve
// from what it kept of the deleted one.
func (ss *sessions) get(ctx context.Context, id string) (*Session, error) {
	if s, ok := ss.setups.Get(id); ok {
		b, shared := ss.store.(Births)
		if !shared {
			return s, nil
		}
		born, err := b.Born(ctx, id)
		if err != nil {
			return nil, err
		}
		if sameBirth(born, s) {
			return s, nil
		}
		ss.forget(id)
	}
	return ss.read(ctx, id)
}

// sameBirth tells whether born (a store's creation time, zero when it does
// not say) is s's: to the microsecond, as PostgreSQL keeps it.
func sameBirth(born time.Time, s *Session) bool {
	return born.IsZero() || born.Truncate(time.Microsecond).Equal(s.CreatedAt.Truncate(time.Microsecond))
}

// forget lets go of all this process keeps of a session: deleted here or
// elsewhere, or made again under its id.
func (ss *sessions) forget(id string) {
	ss.setups.Delete(id)
	ss.derived.Delete(id)
	ss.tidied.Delete(id)
	ss.holds.Delete(id)
}

// read reads a session's setup from the store, with this service's
// review hook.
func (ss *sessions) read(ctx context.Context, id string) (*Session, error) {
	s, err := ss.store.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	s.reviews = ss.reviews
	return s, nil
}

// load reads a session and its ledger and derives its state.
func (ss *sessions) load(ctx context.Context, id string) (*Session, *Ledger, *State, error) {
	return ss.loadHeld(ctx, id, nil)
}

// loadHeld is load for a run's loop, which holds the setup it read under
// the run lock (Service.runResult): held is served in place of a read when
// the ledger shows it final and the session's own, so an ended session,
// whose kept setup its last derivation let go, is not read again at the
// run's end. Final: the ledger has an entry, after which criteria are
// refused and the creation is not taken over (a run or step has claimed
// it), so no replica changes the setup; its own: the loan's created_at is
// held's (sameBirth), not a session made again under its id by another
// replica. Otherwise the setup is read as load reads it.
func (ss *sessions) loadHeld(ctx context.Context, id string, held *Session) (*Session, *Ledger, *State, error) {
	s, kept := ss.setups.Get(id)
	l, lent, inFlight, err := ss.lendState(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if kept && !sameBirth(l.Born, s) {
		// Another session under its id (get says why): read its own.
		ss.forget(id)
		kept = false
	}
	if kept {
		return s, l, ss.deriveFrom(s, l, lent, inFlight), nil
	}
	if held != nil && held.ID == id && !held.Foreign && hasEntries(l) && sameBirth(l.Born, held) {
		return held, l, ss.deriveFrom(held, l, lent, inFlight), nil
	}
	// The setup is read after the ledger: it cannot change once the ledger
	// has an entry (criteria are attached only before the first step), so
	// with one it is final, and kept (ours alone until stored here) while
	// the session is live. (Read before the ledger, it had to be read again
	// once the ledger showed an entry: a first step landing in between
	// could have left it the old setup.)
	if s, err = ss.read(ctx, id); err != nil {
		return nil, nil, nil, err
	}
	st := ss.deriveFrom(s, l, lent, inFlight)
	if !s.Foreign && hasEntries(l) && !hasEnded(st) {
		s.prompts = newPromptSet(s)
		ss.setups.Put(id, s)
	}
	return s, l, st, nil
}

// ledger reads a session's ledger for the service's own use: lent by a store
// that lends (read-only from here on) when it needs no completing, else
// copied.
func (ss *sessions) ledger(ctx context.Context, id string) (*Ledger, error) {
	l, _, err := ss.lend(ctx, id)
	return l, err
}

// lend is ledger, telling whether the ledger is lent (and so never changes).
func (ss *sessions) lend(ctx context.Context, id string) (l *Ledger, lent bool, err error) {
	if lender, ok := ss.store.(LedgerLender); ok {
		l, err := lender.LendLedger(ctx, id)
		if err != nil {
			return nil, false, err
		}
		if complete(l) {
			return l, true, nil
		}
	}
	l, err = ss.store.Ledger(ctx, id)
	return l, false, err
}

// lendState is lend with the agents in flight, which every derivation
// needs: read together by a store that can (StateLender: one round trip
// where they were two), else the ledger then the step locks.
func (ss *sessions) lendState(ctx context.Context, id string) (l *Ledger, lent bool, inFlight map[string]bool, err error) {
	if l, lent, inFlight, ok, err := ss.lendTogether(ctx, id); ok || err != nil {
		return l, lent, inFlight, err
	}
	if l, lent, err = ss.lend(ctx, id); err != nil {
		return nil, false, nil, err
	}
	if inFlight, err = ss.store.InFlight(ctx, id); err != nil {
		return nil, false, nil, err
	}
	return l, lent, inFlight, nil
}

// lendTogether is lendState from a StateLender; ok is false, and nothing
// is read, for a store that is not one.
func (ss *sessions) lendTogether(ctx context.Context, id string) (l *Ledger, lent bool, inFlight map[string]bool, ok bool, err error) {
	lender, ok := ss.store.(StateLender)
	if !ok {
		return nil, false, nil, false, nil
	}
	var holds []SpendHold
	asked := ss.asking()
	if l, inFlight, holds, err = lender.LendState(ctx, id); err != nil {
		return nil, false, nil, true, err
	}
	ss.heldNow(id, asked, holds)
	if complete(l) {
		return l, true, inFlight, true, nil
	}
	// Lent incomplete (a foreign ledger): copied to be completed; the
	// locks were read before it, as a loan reads them.
	if l, err = ss.store.Ledger(ctx, id); err != nil {
		return nil, false, nil, true, err
	}
	return l, false, inFlight, true, nil
}

// heldAt is the holds a read found, and when it was asked (sessions.asked).
type heldAt struct {
	asked uint64
	holds []SpendHold
}

// asking numbers a read of holds about to be asked.
func (ss *sessions) asking() uint64 {
	ss.heldMu.Lock()
	defer ss.heldMu.Unlock()
	ss.asked++
	return ss.asked
}

// heldNow keeps holds, just read with session id's ledger by the read
// numbered asked, for heldRead, unless a read asked later has returned
// first: a store sends a read asked later no earlier (the PostgreSQL
// store shares one sent after a call began, or sends its own later), so
// the later-asked read's holds are the newer, and an older read returning
// last must not drop a hold still out. A read that found none drops the
// entry (kept only while there are holds), so an older read that found
// one may put it back after it went: counted until the next read, the
// safe way.
func (ss *sessions) heldNow(id string, asked uint64, holds []SpendHold) {
	ss.heldMu.Lock()
	defer ss.heldMu.Unlock()
	if kept, ok := ss.holds.Get(id); ok && kept.asked > asked {
		return
	}
	if len(holds) == 0 {
		ss.holds.Delete(id)
		return
	}
	ss.holds.Put(id, heldAt{asked, holds})
}

// heldRead is the holds on session id's budget as the latest read with its
// step locks found them (every process's, this one's too); nil when it
// found none or the store shares none.
func (ss *sessions) heldRead(id string) []SpendHold {
	h, _ := ss.holds.Get(id)
	return h.holds
}

// deriveFrom derives from a ledger just read: memoised when it is lent,
// since a lent ledger never changes.
func (ss *sessions) deriveFrom(s *Session, l *Ledger, lent bool, inFlight map[string]bool) *State {
	if lent {
		return ss.deriveLent(s, l, inFlight)
	}
	return ss.derive(s, l, inFlight)
}

// derive fills in what older or foreign ledgers lack, then derives.
func (ss *sessions) derive(s *Session, l *Ledger, inFlight map[string]bool) *State {
	completeLedger(s, l)
	return ss.forgetEnded(s, Derive(s, l, inFlight))
}

// forgetEnded lets the setup the service keeps for s's session go once a
// derivation finds the session ended, and returns st: an ended session's
// setup is read afresh when it is read again, and kept again once it is
// resumed. Whoever holds it (a run's loop, a step in flight) goes on with
// its own.
func (ss *sessions) forgetEnded(s *Session, st *State) *State {
	if hasEnded(st) {
		ss.setups.Delete(s.ID)
	}
	return st
}

// forgetUnstepped drops the setup a run kept if the session has no step
// yet: until its first step, criteria may still be attached (here or by
// another process sharing the store), so it must be read afresh again. A
// result with steps, or a setup this run did not keep, needs no ledger read.
func (ss *sessions) forgetUnstepped(id string, s *Session, res *TeamResult) {
	if k, ok := ss.setups.Get(id); !ok || k != s || (res != nil && res.Steps > 0) {
		return
	}
	l, err := ss.ledger(context.Background(), id)
	if err != nil || !hasEntries(l) {
		ss.setups.DeleteIf(id, func(k *Session) bool { return k == s })
	}
}
