package coordination

import (
	"context"
	"errors"
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
// while the store lists them (and up to endedMax of them). Then it closes
// the MCP servers this service holds for sessions that have ended or gone,
// wherever that happened, or that no step has used for mcpIdleMax
// (sweepServers).
func (svc *Service) Sweep(ctx context.Context) error {
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return err
	}
	sweep := svc.sweeps.begin()
	defer svc.sweeps.prune(sweep)
	looked := svc.opts.Now()
	read := map[string]string{} // of the sessions whose servers run here
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
		if svc.servers.holds(id) {
			read[id] = st.Life.Status
		}
		if st.Life.Status == StatusFinished || st.Life.Status == StatusFailed {
			svc.sweeps.ended(id, sweep)
		}
	}
	svc.sweepServers(ctx, read, looked)
	return nil
}

// mcpIdleMax is how long a session's MCP servers run here with no step
// taking them before the sweep closes them (a later step starts them
// again). A session stepped by a client that went away without ending it
// would otherwise hold its processes until the server stops. Thirty
// minutes is three default step timeouts (600 s) of silence from every
// agent of the session, well past a caller's pause between steps, so a
// live session rarely pays a restart (a start of up to 30 s and the
// servers' own state); a step in flight is never idle.
const mcpIdleMax = 30 * time.Minute

// sweepServers closes the MCP servers this service holds for a session
// that reads ended (finished, failed, cancelled) or is gone from the store:
// an end landed on another replica (cancel_team, a finalize, a landing
// that ended it, a prune), which nothing here hears. It reads only the
// sessions holding servers here, and those the sweep has just read not
// again. A session whose run is here is its run's to close; one with a
// step in flight here is the step's.
func (svc *Service) sweepServers(ctx context.Context, read map[string]string, looked time.Time) {
	for _, id := range svc.servers.held() {
		if ctx.Err() != nil {
			return
		}
		if _, ok := svc.runs.get(id); ok || svc.runs.steppingSession(id) {
			continue
		}
		used, ok := svc.servers.lastUsed(id)
		if !ok {
			continue
		}
		if now := svc.opts.Now(); now.Sub(used) >= mcpIdleMax {
			svc.closeServers(id, now.Add(-mcpIdleMax), "no step has used them for "+mcpIdleMax.String())
			continue
		}
		status, seen := read[id]
		at := looked
		if !seen {
			at = svc.opts.Now()
			var err error
			if status, err = svc.serversStatus(ctx, id); err != nil {
				svc.log.Warn().Err(err).Str("session", id).Msg("session timer could not check a session holding MCP servers")
				continue
			}
		}
		switch status {
		case StatusFinished, StatusFailed, StatusCancelled, statusGone:
			svc.closeServers(id, at, "the session "+status)
		}
	}
}

// statusGone is what serversStatus answers for a session the store no
// longer has (pruned, here or elsewhere).
const statusGone = "deleted"

// serversStatus reads the status of a session the sweep did not read.
func (svc *Service) serversStatus(ctx context.Context, id string) (string, error) {
	s, err := svc.sessions.get(ctx, id)
	if err == nil {
		var st *State
		if _, st, _, err = svc.current(ctx, s); err == nil {
			return st.Life.Status, nil
		}
	}
	if errors.Is(err, ErrSessionNotFound) {
		return statusGone, nil
	}
	return "", err
}

// closeServers closes a session's MCP servers unless a step took them
// after cutoff (the look they were judged by), or a run or a step here has
// them now. Under the session's start lock: a Start that resumes a
// cancelled session starts its servers before its resume is written, and
// must not have them closed for a status it is changing.
func (svc *Service) closeServers(id string, cutoff time.Time, why string) {
	defer svc.sessions.starting(id)()
	if _, ok := svc.runs.get(id); ok || svc.runs.steppingSession(id) {
		return
	}
	if svc.servers.closeUnused(id, cutoff) {
		svc.log.Info().Str("session", id).Str("why", why).Msg("closed the session's MCP servers")
	}
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
