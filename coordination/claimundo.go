package coordination

import (
	"context"
	"errors"
	"time"
)

// A claim whose answer was lost may have been written: the caller's context
// ended, or the connection was cut, after the store had the claim. Left
// alone it is a lease nobody renews. A run's would read "interrupted" once
// it expired, and every replica resuming interrupted runs would start a
// run that nobody asked for (the request that claimed it failed), at the
// user's expense; a step's would keep its agent busy until it expired. So
// a failed claim that the store did not refuse is taken back: the lease is
// read and, if it is this service's and not released, released by its
// version.

// refusedClaim tells a claim the store turned down, which wrote nothing: a
// live holder, no such session or agent, an id it would not take. Any
// other failure may have come after the claim was written.
func refusedClaim(err error) bool {
	return errors.Is(err, ErrSessionRunning) || errors.Is(err, ErrAgentBusy) ||
		errors.Is(err, ErrSessionNotFound) || errors.Is(err, ErrAgentNotFound) || errors.Is(err, ErrBadInput)
}

// undoClaim releases the lease read returns if this service holds it
// unreleased, trying again with the outage backoff until it can tell or
// until gives up; it says whether it could. The caller holds the lock
// (run or step) that keeps this service's other claims of the lease out
// meanwhile, so an unreleased lease of this owner is the lost claim's, or
// one older and as dead.
func (lz *leases) undoClaim(id, what string, read func(context.Context) (*RunLease, error), release func(context.Context, int64) error, until time.Time) bool {
	for n := 0; ; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), lz.heartbeat)
		l, err := read(ctx)
		if err == nil && l != nil && !l.Released && l.ID == lz.owner {
			if err = release(ctx, l.Version); err == nil {
				lz.log.Info().Str("session", id).Str("lease", what).Int64("version", l.Version).
					Msg("released a lease whose claim failed after it was written")
			}
		}
		cancel()
		if err == nil || errors.Is(err, ErrLeaseLost) {
			return true
		}
		wait := outageWait(n)
		if !time.Now().Add(wait).Before(until) {
			lz.log.Warn().Err(err).Str("session", id).Str("lease", what).
				Msg("could not tell whether a failed claim was written; if it was, its lease expires unrenewed")
			return false
		}
		time.Sleep(wait)
	}
}

// undoRunClaim takes back a failed run claim (claimRun), off the caller's
// path, holding the run lock until it is done so that no other run of this
// service claims the lease in between; it gives up when the claim, if
// written, would have expired.
func (lz *leases) undoRunClaim(ls LeaseStore, id string, unlock func()) {
	defer unlock()
	lz.undoClaim(id, "run", func(ctx context.Context) (*RunLease, error) { return ls.ReadRun(ctx, id) },
		func(ctx context.Context, v int64) error { return ls.ReleaseRun(ctx, id, v) }, time.Now().Add(lz.ttl))
}

// undoStepClaim takes back a failed step claim (claimStep) while the
// caller still holds the agent's step lock. It waits at most a heartbeat
// or so: a step claim left behind only keeps its agent busy until it
// expires, which the step's caller is not to be held for.
func (lz *leases) undoStepClaim(ls StepLeaseStore, id, agent string) {
	lz.undoClaim(id, "step of "+agent, func(ctx context.Context) (*RunLease, error) {
		all, err := ls.ReadSteps(ctx, id)
		return all[agent], err
	}, func(ctx context.Context, v int64) error { return ls.ReleaseStep(ctx, id, agent, v) }, time.Now().Add(lz.heartbeat+time.Second))
}
