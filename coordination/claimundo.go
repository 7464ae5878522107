package coordination

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A claim whose answer was lost may have been written: the caller's context
// ended, or the connection was cut, after the store had the claim. Left
// alone it is a lease nobody renews. A run's would read "interrupted" once
// it expired, and every replica resuming interrupted runs would start a
// run that nobody asked for (the request that claimed it failed), at the
// user's expense; a step's would keep its agent busy until it expired. So
// a failed claim that the store did not refuse is taken back: the lease is
// read and, if it is this service's claim and not released, released by
// its version; a run's only when that leaves the session reading as it did
// before the claim (undoableRunClaim).

// refusedClaim tells a claim the store turned down, which wrote nothing: a
// live holder, no such session or agent, an id it would not take. Any
// other failure may have come after the claim was written.
func refusedClaim(err error) bool {
	return errors.Is(err, ErrSessionRunning) || errors.Is(err, ErrAgentBusy) ||
		errors.Is(err, ErrSessionNotFound) || errors.Is(err, ErrAgentNotFound) || errors.Is(err, ErrBadInput)
}

// undoClaim takes back (release) the lease read returns if it is this
// service's claim of version want (0: any version) and unreleased, trying
// again with the outage backoff until it can tell or until; then it logs
// that it could not. The release names the version, so a later claim is
// never released in its place.
func (lz *leases) undoClaim(id, what string, want int64, read func(context.Context) (*RunLease, error), release func(context.Context, int64) error, until time.Time, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop: // a wait that ended as stop closed must not try again
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), lz.heartbeat)
		l, err := read(ctx)
		if err == nil && l != nil && !l.Released && l.ID == lz.owner && (want == 0 || l.Version == want) {
			if err = release(ctx, l.Version); err == nil {
				lz.log.Info().Str("session", id).Str("lease", what).Int64("version", l.Version).
					Msg("took back a lease whose claim failed after it was written")
			}
		}
		cancel()
		if err == nil || errors.Is(err, ErrLeaseLost) {
			return
		}
		wait := outageWait(n)
		if !time.Now().Add(wait).Before(until) {
			lz.log.Warn().Err(err).Str("session", id).Str("lease", what).
				Msg("could not tell whether a failed claim was written; if it was, its lease expires unrenewed")
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
	}
}

// undoableRunClaim is the version a failed run claim would have written,
// if taking it back leaves the session reading as it did before: a lease
// never claimed (a session's first run) or released (its last run ended).
// A claim that took over from a dead run (prev unreleased) is left to
// expire: released, the session would read running with nothing running
// it, where it read interrupted and a replica will take it up again. Nor
// is one undone when the lease could not be read first (no version to
// name).
func undoableRunClaim(prev *RunLease, prevErr error) (int64, bool) {
	switch {
	case prevErr != nil:
		return 0, false
	case prev == nil:
		return 1, true
	case prev.Released:
		return prev.Version + 1, true
	}
	return 0, false
}

// runUndos are the failed run claims being taken back, by session: off
// the caller's path, without the run lock, until the claim, if written,
// would have expired. A claim the store never wrote leaves version want
// free for this service's next claim, which the undo must not release: so
// the next claim of the session (claimRun, under the run lock) stops the
// undo and waits for an attempt under way, then takes back any lease of
// this service's left unreleased, the failed claim's among them.
type runUndos struct {
	mu sync.Mutex
	by map[string]*runUndo
	// closed is set once a shutdown has waited for the undos (finish): one
	// that would start after it, its claim failing as the service stops,
	// is not started, since the store is about to close; the claim, if it
	// was written, expires unrenewed.
	closed bool
}

type runUndo struct{ stop, done chan struct{} }

// start takes back a failed run claim of version want in the background.
func (u *runUndos) start(lz *leases, ls LeaseStore, id string, want int64) {
	un := &runUndo{stop: make(chan struct{}), done: make(chan struct{})}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		lz.log.Warn().Str("session", id).Msg("a run claim failed as the server stops; it is not taken back, and if it was written it expires unrenewed")
		return
	}
	if u.by == nil {
		u.by = map[string]*runUndo{}
	}
	u.by[id] = un // the run lock was held: no other undo of id is starting
	u.mu.Unlock()
	go func() {
		defer close(un.done)
		lz.undoClaim(id, "run", want, func(ctx context.Context) (*RunLease, error) { return ls.ReadRun(ctx, id) },
			func(ctx context.Context, v int64) error { return ls.ReleaseRun(ctx, id, v) }, time.Now().Add(lz.ttl), un.stop)
		u.mu.Lock()
		if u.by[id] == un {
			delete(u.by, id)
		}
		u.mu.Unlock()
	}()
}

// end stops the background undo of id, if any, and waits for an attempt
// under way, for a claim about to be made under the run lock (claimRun
// then releases the failed claim itself, if it was written).
func (u *runUndos) end(id string) {
	u.mu.Lock()
	un := u.by[id]
	delete(u.by, id)
	u.mu.Unlock()
	if un == nil {
		return
	}
	u.stop(un)
	<-un.done
}

// finish waits for every undo under way, so that a service shutting down
// lets them take their claims back before its store closes; those still
// trying when ctx ends are stopped (a claim of theirs, if written, expires
// unrenewed) and ctx's error returned, once an attempt under way (bounded
// by its heartbeat's timeout) is over: none may use the store after.
func (u *runUndos) finish(ctx context.Context) error {
	u.mu.Lock()
	u.closed = true
	all := make([]*runUndo, 0, len(u.by))
	for _, un := range u.by {
		all = append(all, un)
	}
	u.mu.Unlock()
	for i, un := range all {
		select {
		case <-un.done:
		case <-ctx.Done():
			for _, un := range all[i:] {
				u.stop(un)
			}
			for _, un := range all[i:] {
				<-un.done
			}
			return ctx.Err()
		}
	}
	return nil
}

// stop ends an undo at its next wait, without waiting for it.
func (u *runUndos) stop(un *runUndo) {
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-un.stop:
	default:
		close(un.stop)
	}
}

// undoStepClaim takes back a failed step claim (claimStep) while the
// caller still holds the agent's step lock, so no other claim of the
// agent's step lease comes in between (any version of this service's is
// the failed claim's, or one older and as dead). It waits at most a
// heartbeat or so: a step claim left behind only keeps its agent busy
// until it expires, which the step's caller is not to be held for. A
// claim that took over earlier tries that did not land (it carries on
// their run of claims: RunLease.ChainFrom) is expired, not released: a
// release would end that run, and the agent's next step would forget
// their time and tool calls; expired, the lease reads abandoned as it did
// before the claim, and the next claim carries the run on.
func (lz *leases) undoStepClaim(ls StepLeaseStore, id, agent string) {
	lz.undoStepClaimAt(ls, id, agent, 0, nil)
}

// undoStepClaimOf is undoStepClaim of claim l alone, taken back without
// the step lock (a take with its lease that failed once sent): matched by
// its version and the time it was claimed too, since another step of the
// agent in this service may hold a claim of the same version (one sent
// from a row the store did not know is version 1 whatever the row is).
func (lz *leases) undoStepClaimOf(ls StepLeaseStore, id, agent string, l RunLease) {
	lz.undoStepClaimAt(ls, id, agent, l.Version, func(seen *RunLease) bool { return seen.Claimed.Equal(l.Claimed) })
}

// undoStepClaimAt is undoStepClaim of the claim of version want (0: any)
// that is (nil: any).
func (lz *leases) undoStepClaimAt(ls StepLeaseStore, id, agent string, want int64, is func(*RunLease) bool) {
	var seen *RunLease
	lz.undoClaim(id, "step of "+agent, want, func(ctx context.Context) (*RunLease, error) {
		all, err := ls.ReadSteps(ctx, id)
		seen = all[agent]
		if seen != nil && is != nil && !is(seen) {
			return nil, err // another claim: nothing of this one's to take back
		}
		return seen, err
	}, func(ctx context.Context, v int64) error {
		if seen != nil && seen.ChainFrom != 0 && seen.ChainFrom < v {
			_, err := ls.RenewStep(ctx, id, agent, v, time.Millisecond)
			return err
		}
		return ls.ReleaseStep(ctx, id, agent, v)
	}, time.Now().Add(lz.heartbeat+time.Second), nil)
}
