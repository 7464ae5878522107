package coordination

import (
	"context"
	"time"
)

// StepLeaseStore keeps the lease of each agent's step in flight: the process
// calling the agent's model holds it, renews it by a heartbeat while the call
// runs and releases it when the step lands. It is the run lease's record and
// rules (RunLease, the *StepLease rules below), one per agent of a session,
// so that readers tell a step whose process died (its lease abandoned) from
// one still working, in a run or a step-driven session alike, and a store
// can fence a step's landing by its version. Every store implements it with
// the same rules (storetest's LeaseCases).
type StepLeaseStore interface {
	// AcquireStep claims agent's step lease for owner until now+ttl, unless
	// a live holder has it (ErrAgentBusy).
	AcquireStep(ctx context.Context, id, agent string, owner LeaseOwner, ttl time.Duration) (RunLease, error)
	// RenewStep extends the claim named by version; ErrLeaseLost if it is
	// released or another claim replaced it.
	RenewStep(ctx context.Context, id, agent string, version int64, ttl time.Duration) (RunLease, error)
	// ReleaseStep ends the claim named by version, keeping the record.
	ReleaseStep(ctx context.Context, id, agent string, version int64) error
	// ReadSteps reads every agent's step lease without taking any, by agent
	// id; an agent whose step was never claimed has none.
	ReadSteps(ctx context.Context, id string) (map[string]*RunLease, error)
}

// ClaimStepLease is AcquireStep's rule: a new claim by owner, one version
// on, or ErrAgentBusy while cur is held. A claim over owner's own lease
// adds none of its own try's time: the claimant holds the agent's step
// lock, so that try ended (given up in an outage, its release lost) and no
// process of it died; what that try carried from dead ones still counts.
func ClaimStepLease(id, agent string, cur *RunLease, owner LeaseOwner, now time.Time, ttl time.Duration) (RunLease, error) {
	if cur.Held(now) {
		return RunLease{}, &BusyError{Session: id, Agent: agent, By: holder(cur)}
	}
	next := claimNext(cur, owner, now, ttl)
	if cur != nil && !cur.Released && cur.ID == owner.ID {
		next.RanBefore = cur.RanBefore
		if next.RanBefore == 0 {
			next.CarriedFrom = time.Time{}
		}
	}
	return next, nil
}

// RenewStepLease is RenewStep's rule.
func RenewStepLease(id, agent string, cur *RunLease, version int64, now time.Time, ttl time.Duration) (RunLease, error) {
	return renew(stepWhat(id, agent), cur, version, now, ttl)
}

// ReleaseStepLease is ReleaseStep's rule: the record stays, released.
func ReleaseStepLease(id, agent string, cur *RunLease, version int64, now time.Time) (RunLease, error) {
	return release(stepWhat(id, agent), cur, version, now)
}

func stepWhat(id, agent string) leaseWhat { return leaseWhat{id: id, agent: agent} }
