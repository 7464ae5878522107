package coordination

import (
	"context"
	"time"
)

// Sweep is the server's session timer: it decides every step-driven session
// that has passed its timeout or budget, or has a decision pending, exactly as
// a step would. Sessions that have ended are remembered and not read again,
// while the store lists them (and up to endedMax of them).
func (svc *Service) Sweep(ctx context.Context) error {
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return err
	}
	sweep := svc.sweeps.Add(1)
	defer svc.ended.DeleteFunc(func(_ string, seen uint64) bool { return seen != sweep })
	for _, id := range ids {
		if _, done := svc.ended.Get(id); done {
			svc.ended.Put(id, sweep)
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
			if svc.ended.Len() < endedMax {
				// Full, the ones seen first stay: letting the least
				// recently seen go would have every sweep, which lists
				// sessions in the same order, read each one again.
				svc.ended.Put(id, sweep)
			}
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
