package coordination

import (
	"context"
	"fmt"
	"time"
)

// HeldElsewhere tells whether session id's run is held, alive, by another
// process or replica sharing the store: a caller may follow it there
// without running anything here.
func (svc *Service) HeldElsewhere(ctx context.Context, id string) bool {
	if _, here := svc.Running(id); here {
		return false
	}
	return svc.leaseLive(ctx, id)
}

// leaseLive tells whether session id's run lease is held by a live
// holder, whichever process that is.
func (svc *Service) leaseLive(ctx context.Context, id string) bool {
	ls, ok := svc.store.(LeaseStore)
	if !ok {
		return false
	}
	l, err := ls.ReadRun(ctx, id)
	return err == nil && l.Held(svc.now())
}

// RunHeld tells whether a run holds session id, here or elsewhere.
func (svc *Service) RunHeld(ctx context.Context, id string) bool {
	if _, here := svc.Running(id); here {
		return true
	}
	return svc.HeldElsewhere(ctx, id)
}

// Cancels is how many times session id has been cancelled: a run started
// now lifts those, and a later one stops it (Run.Cancels).
func (svc *Service) Cancels(ctx context.Context, id string) (int, error) {
	return svc.cancelsNow(ctx, id)
}

// NotStarted records that session id, which this service created for a
// run, was refused that run before it started (the server at its limit of
// runs): it reads cancelled, saying why, rather than running with nothing
// running it, and a later run of it resumes it. It tells whether it did; a
// session this service did not create for a run, or that started, is left
// as it is.
func (svc *Service) NotStarted(ctx context.Context, id, why string) (bool, error) {
	if !svc.fresh.DeleteIf(id, func(struct{}) bool { return true }) {
		return false, nil
	}
	if svc.HeldElsewhere(ctx, id) { // started elsewhere meanwhile
		return false, nil
	}
	res, err := svc.markCancelled(ctx, id, "not started: "+why, false)
	if err != nil {
		if svc.storeDown(err) {
			// Left so, it would read running with nothing running it, on
			// every replica, for ever: the record is made once the store
			// answers.
			go svc.markNotStartedLater(id, why)
		}
		return false, fmt.Errorf("could not record that session %q was not started: %w", id, err)
	}
	return res.Status == StatusCancelled, nil
}

// notStartedRetry bounds how long a not-started record waits for the store.
const notStartedRetry = 10 * time.Minute

// markNotStartedLater records that session id was not started once the
// store answers, tried with the outage backoff for notStartedRetry, unless
// a run has started it since (ranSince) or the service is stopping.
func (svc *Service) markNotStartedLater(id, why string) {
	ctx := context.Background()
	for n, until := 0, time.Now().Add(notStartedRetry); time.Now().Before(until); n++ {
		if time.Sleep(outageWait(n)); svc.runs.shut() {
			return
		}
		release := svc.sessions.starting(id)
		ran, err := svc.ranSince(ctx, id)
		if err == nil && !ran {
			_, err = svc.markCancelled(ctx, id, "not started: "+why, false)
		}
		release()
		switch {
		case ran:
			return
		case err != nil && svc.storeDown(err):
			continue
		case err != nil:
			svc.log.Warn().Err(err).Str("session", id).Msg("could not record that a session was not started")
		}
		return
	}
}

// ranSince tells whether a run has started session id since it was
// created, here or elsewhere, by what its run lease says (under the
// session's start lock, so no start here can come between): a run going
// on here, or a run lease of another process that is not released (held,
// or left by a run that died: the session is interrupted, and resumable as
// that). A lease released is a run that ended, whose session is no longer
// running, or a failed start's claim taken back; one of this service's own
// with no run here is a failed start's claim still being taken back
// (claimundo.go), or given up on.
func (svc *Service) ranSince(ctx context.Context, id string) (bool, error) {
	if _, here := svc.Running(id); here {
		return true, nil
	}
	ls, ok := svc.store.(LeaseStore)
	if !ok {
		return false, nil
	}
	l, err := ls.ReadRun(ctx, id)
	if err != nil {
		return false, err
	}
	return l != nil && !l.Released && l.ID != svc.leases.owner, nil
}
