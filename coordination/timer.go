package coordination

import (
	"context"
	"sync/atomic"
	"time"
)

// sweeps is what the session timer remembers between sweeps: the sessions
// it has seen end, so that it does not read them again.
type sweeps struct {
	// seen: id → the sweep that last listed it, for the sessions the timer
	// has seen end. Pruned to what the store still lists each sweep, and
	// capped; past the cap an ended session is read by every sweep, as it
	// was before it was seen end.
	seen  *lru[string, uint64]
	count atomic.Uint64 // sweeps begun
}

// begin numbers a new sweep.
func (sw *sweeps) begin() uint64 { return sw.count.Add(1) }

// seenEnd tells whether the session was seen end, and marks it listed by
// this sweep if so.
func (sw *sweeps) seenEnd(id string, sweep uint64) bool {
	if _, done := sw.seen.Get(id); !done {
		return false
	}
	sw.seen.Put(id, sweep)
	return true
}

// ended remembers a session the sweep saw end.
func (sw *sweeps) ended(id string, sweep uint64) {
	if sw.seen.Len() < endedMax {
		// Full, the ones seen first stay: letting the least recently seen
		// go would have every sweep, which lists sessions in the same
		// order, read each one again.
		sw.seen.Put(id, sweep)
	}
}

// prune forgets the ended sessions the sweep did not list (gone from the
// store).
func (sw *sweeps) prune(sweep uint64) {
	sw.seen.DeleteFunc(func(_ string, seen uint64) bool { return seen != sweep })
}

// Sweep is the server's session timer: it decides every step-driven session
// that has passed its timeout or budget, or has a decision pending, exactly as
// a step would. Sessions that have ended are remembered and not read again,
// while the store lists them (and up to endedMax of them).
func (svc *Service) Sweep(ctx context.Context) error {
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return err
	}
	sweep := svc.sweeps.begin()
	defer svc.sweeps.prune(sweep)
	for _, id := range ids {
		if svc.sweeps.seenEnd(id, sweep) {
			continue
		}
		s, err := svc.sessions.get(ctx, id)
		if err != nil || s.Foreign || s.Driver != DriverStep {
			continue
		}
		_, st, _, err := svc.current(ctx, s)
		if err != nil {
			svc.log.Warn().Err(err).Str("session", id).Msg("session timer could not check a session")
			continue
		}
		if st.Life.Status == StatusFinished || st.Life.Status == StatusFailed {
			svc.sweeps.ended(id, sweep)
			svc.servers.close(id) // ended by its timer, with no step landing
		}
	}
	return nil
}

// RunTimer sweeps every interval until ctx ends.
func (svc *Service) RunTimer(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := svc.Sweep(ctx); err != nil && ctx.Err() == nil {
				svc.log.Warn().Err(err).Msg("session timer")
			}
		}
	}
}
