package coordination

import (
	"context"
	"time"
)

// StepLockWithLease is a StepLeaseStore that can claim an agent's step
// lease in the same write that takes its step lock, as a server step takes
// both back to back: a round trip a step fewer on a networked store.
type StepLockWithLease interface {
	StepLeaseStore
	// LockStepWithLease is LockStep, and, once the lock is taken,
	// AcquireStep's claim in the same write when the store can decide it
	// there without refusing it: the lease is nil when it claimed none,
	// the lock held all the same, and the caller claims with AcquireStep,
	// whose refusals are the ones to report. A take refused (the lock
	// busy, no such session) claims nothing. Any other error comes with
	// the claim that may have been written (nil: none was sent), its
	// times as the store keeps them, for the caller to take back by its
	// version and the time it was claimed, as a failed AcquireStep's.
	LockStepWithLease(ctx context.Context, id, agent string, owner LeaseOwner, ttl time.Duration) (StepLock, *RunLease, error)
}

// stepTake takes an agent's step lock for stepState; undo, when not nil,
// takes back what was claimed with it (a step lease), before the lock goes
// when the step does not go ahead.
type stepTake func(ctx context.Context, id, agent string) (lock StepLock, undo func(), err error)

// lockOnly is the step lock's take alone (LockStep).
func (svc *Service) lockOnly(ctx context.Context, id, agent string) (StepLock, func(), error) {
	l, err := svc.store.LockStep(ctx, id, agent)
	return l, nil, err
}

// lockedStepState is stepState for a server step, with its step lease
// claimed and its heartbeat started: in the lock's own write on a store
// that can (StepLockWithLease), else by claimStep once the agent is found
// due, as before. A lease claimed with the lock of an agent not due after
// all is released before the lock goes, so the agent's next step, here or
// elsewhere, finds it free.
func (svc *Service) lockedStepState(ctx context.Context, s *Session, agentID string) (StepLock, *State, *stepClaim, error) {
	ls, ok := svc.store.(StepLockWithLease)
	if !ok {
		lock, st, err := svc.stepState(ctx, s, agentID, svc.lockOnly)
		if err != nil {
			return nil, nil, nil, err
		}
		claim, err := svc.leases.claimStep(ctx, s.ID, agentID)
		if err != nil {
			lock.Release()
			return nil, nil, nil, err
		}
		return lock, st, claim, nil
	}
	lz := svc.leases
	var claim *stepClaim
	take := func(ctx context.Context, id, agent string) (StepLock, func(), error) {
		sent := time.Now()
		lock, l, err := ls.LockStepWithLease(ctx, id, agent, ThisProcess(lz.owner), lz.ttl)
		if err != nil {
			// Only the claim it sent: another step of the agent in this
			// service may hold the lock, and a lease of a version below or
			// of the same one (undoStepClaimOf).
			if l != nil && !refusedClaim(err) {
				lz.undoStepClaimOf(ls, id, agent, *l) // claimundo.go
			}
			return nil, nil, err
		}
		if l == nil {
			return lock, nil, nil
		}
		// Its heartbeat starts at once: the loan and the derivation that
		// tell whether the agent is due may wait on a busy store.
		claim = lz.heldStep(ls, id, agent, *l, sent)
		return lock, claim.release, nil
	}
	lock, st, err := svc.stepState(ctx, s, agentID, take)
	if err != nil {
		return nil, nil, nil, err
	}
	if claim == nil {
		if claim, err = lz.claimStep(ctx, s.ID, agentID); err != nil {
			lock.Release()
			return nil, nil, nil, err
		}
	}
	return lock, st, claim, nil
}
