package coordination

import (
	"context"
	"errors"
	"fmt"
)

// A cancel acknowledged is a cancel kept: once Cancel has recorded the
// cancelled entry (under the session lock) and said "cancelled", no step
// that began before it lands, and no run that was asked for before it lifts
// it. Both remember how many cancelled entries the session log held when
// they began (Lifecycle.Cancels) and compare under the session lock, where
// the cancel is recorded too, so every store — the memory store, the files
// other processes share, a database other replicas share — fences alike.
// A server step landing through a LeasedLanding (the PostgreSQL store) is
// compared in the landing's own write instead, still under the session
// lock: the store counts the cancelled entries there and refuses with
// CancelledMidStep, a read of the ledger fewer a step. A host's step
// landing through an UncancelledLanding (the same store) is compared both
// under the lock and in its write, where a cancel recorded by a second
// holder of a lock the store cannot keep exclusive is counted too.
// A run's own watch usually stops its calls sooner (run.go); the fence is
// for the reply that arrives in between.

// errCancelledMidStep refuses the landing of a step whose session was
// cancelled while its model was working. It is ErrNotNext too, which a run's
// loop takes as "look again" (it then finds the session cancelled).
var errCancelledMidStep = errors.New("the session was cancelled while the step was in flight")

// cancelledSince tells whether the session log holds more cancelled
// entries than seen, the count when the caller began.
func cancelledSince(l *Ledger, seen int) bool {
	return lifecycle(l.Session).Cancels > seen
}

// CancelledMidStep is the error of a step not recorded because its session
// was cancelled while it was in flight (ErrNotNext), in the words every
// cancel fence uses: lockLanding's, and a LeasedLanding's or an
// UncancelledLanding's in its write.
func CancelledMidStep(id, agent string, step int) error {
	return fmt.Errorf("%w: %w: step %d of %s in %s was not recorded; resume the session to continue", ErrNotNext, errCancelledMidStep, step, agent, id)
}

// lockLanding takes the session lock for a step's landing and checks that no
// cancel landed since the step began (cancels: the count it began with). On
// success the caller appends and decides under the lock and then lets it
// go; the lock is taken without the step's context, since a step whose
// model has replied lands even when its run has stopped wanting it (a
// forced end), unless a cancel says otherwise. inWrite (a LeasedLanding,
// which compares the cancels in the landing's own write, under this lock)
// skips the check here. retried (an earlier attempt found the store
// unreachable, so it may have landed) lets a step already in the ledger
// through to the store's append (holdsStep).
func (svc *Service) lockLanding(ctx context.Context, s *Session, agent string, step, cancels int, inWrite, retried bool) (unlock func(), err error) {
	ctx = context.WithoutCancel(ctx)
	unlock, err = svc.store.LockSession(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	if inWrite {
		return unlock, nil
	}
	l, _, err := svc.sessions.lend(ctx, s.ID)
	if err == nil && cancelledSince(l, cancels) && !(retried && holdsStep(l, agent, step)) {
		err = CancelledMidStep(s.ID, agent, step)
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// holdsStep tells whether the ledger already has the agent's entry for
// step. On a retry under the step lock only one landing can have put it
// there: this step's own, whose answer was lost with the connection at the
// commit (outage.go), or, when the lock expired meanwhile, another
// replica's. Only the PostgreSQL store reports an outage, so only it
// retries, and its append tells which (its own entry is found stored;
// another's is refused, as a lost lease or, by its own cancel fence, as
// cancelled): a cancel recorded since refuses
// only a step that had not landed, and a host is not told that a step it
// submitted, which is in the ledger, was cancelled.
func holdsStep(l *Ledger, agent string, step int) bool {
	for i := range l.Agents[agent] {
		if l.Agents[agent][i].Step == step {
			return true
		}
	}
	return false
}

// cancelsNow is how many times the session has been cancelled so far: what
// a run asked for now may lift (Start), and no later cancel.
func (svc *Service) cancelsNow(ctx context.Context, id string) (int, error) {
	l, _, err := svc.sessions.lend(ctx, id)
	if err != nil {
		return 0, err
	}
	return lifecycle(l.Session).Cancels, nil
}
