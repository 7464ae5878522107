package coordination

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A server step holds its agent's step lease (leasestep.go) while its model
// call runs, taken after the agent's step lock: the lock keeps two steps of
// one agent apart on this host, the lease across hosts, and tells readers
// the step is alive (an abandoned one reads interrupted, stepStatus). Its
// landing is fenced by it: a step whose lease was lost writes nothing.

// stepClaim is a held step lease, renewed by its service's step heartbeat
// (stepbeats.go); nil for a store without step leases.
type stepClaim struct {
	lz        *leases
	lost      chan struct{} // closed when the lease was lost to another claim
	ls        StepLeaseStore
	id, agent string
	version   int64
	once      sync.Once
	down      func(error) bool // the store is unreachable (outage.go)
	ttl       time.Duration

	// mu keeps the heartbeat's renewal apart from a landing that releases
	// the lease in its own write (LeasedLanding): a renewal after that
	// release would find the lease released and report it lost to another
	// process.
	mu sync.Mutex
	// landed: a landing released the lease; the heartbeat renews it no
	// more and release leaves it be.
	landed bool
	// released: release has run; no renewal may follow it.
	released bool
	// sent is when the claim was sent: its lease surely lasts from then
	// until renewed (stepBeats).
	sent time.Time
	// triedBefore is how long earlier tries of the step ran on processes
	// that died (RunLease.RanBefore): the step's timeout counts it.
	// triedFrom is when the last of them was claimed (CarriedFrom).
	triedBefore time.Duration
	triedFrom   time.Time
	// chainFrom is the version its run of claims began at
	// (RunLease.ChainFrom): below version, the claims of earlier tries
	// of the step that did not land, whose tool calls the step counts.
	chainFrom int64
	// canRunOut: the lease can run out while this process lives, so the
	// heartbeat stops the step's call once it may have (a store that can
	// be unreachable: OutageStore). A memory or file store's renewals do
	// not fail for want of an answer, and another process on this host
	// sees this one alive.
	canRunOut bool
	// stopCall, set by the step while its model call runs, stops the call
	// once the lease may have run out or was lost (stopped, set by ranOut,
	// cleared by a renewal taken since); guarded by stopMu, as the
	// heartbeat calls it.
	stopMu   sync.Mutex
	stopCall context.CancelCauseFunc
	stopped  error
	// doubt: a landing's answer was lost with the store unreachable. It
	// may have landed and released the lease itself, so a renewal refused
	// as lost proves no other process took it; the landing's retry, fenced
	// in its own write, tells which.
	doubt bool
}

// retryRelease tries a release the store refused while unreachable again,
// with the outage backoff, until it goes through or the lease has expired.
func (c *stepClaim) retryRelease() {
	deadline := time.Now().Add(c.ttl)
	for n := 0; time.Now().Before(deadline); n++ {
		time.Sleep(outageWait(n))
		err := c.ls.ReleaseStep(context.Background(), c.id, c.agent, c.version)
		if !c.down(err) {
			return
		}
	}
}

// claimStep takes the agent's step lease and starts its heartbeat. The
// caller holds the agent's step lock.
func (lz *leases) claimStep(ctx context.Context, id, agent string) (*stepClaim, error) {
	ls, ok := lz.store.(StepLeaseStore)
	if !ok {
		return nil, nil
	}
	sent := time.Now()
	l, err := ls.AcquireStep(ctx, id, agent, ThisProcess(lz.owner), lz.ttl)
	if err != nil {
		if !refusedClaim(err) {
			lz.undoStepClaim(ls, id, agent) // claimundo.go
		}
		return nil, err
	}
	return lz.heldStep(ls, id, agent, l, sent), nil
}

// heldStep is the claim of lease l, sent at sent, with its heartbeat
// started.
func (lz *leases) heldStep(ls StepLeaseStore, id, agent string, l RunLease, sent time.Time) *stepClaim {
	_, canRunOut := lz.store.(OutageStore)
	c := &stepClaim{lz: lz, lost: make(chan struct{}), ls: ls, id: id, agent: agent, version: l.Version, ttl: lz.ttl, sent: sent, canRunOut: canRunOut, triedBefore: l.RanBefore, triedFrom: l.CarriedFrom, chainFrom: l.ChainFrom,
		down: func(err error) bool { return unreachable(lz.store, err) }}
	lz.steps.hold(lz, c)
	return c
}

// leaseVersion is the claim's version of the step lease; 0 for a nil
// claim.
func (c *stepClaim) leaseVersion() int64 {
	if c == nil {
		return 0
	}
	return c.version
}

// before is how long earlier tries of the step ran before this claim took
// it over from a process that died; 0 for a nil claim, and when the try
// it took over from landed an entry of the agent's after all (one timed
// since that try's claim, both by that process's clock): its release
// lost, that try was an earlier step's, not this one's. An agent's
// previous step landed by another replica whose clock runs ahead of the
// dead try's by more than the time between the two reads as that try's:
// its time is then not counted, as before the carry (a step number on the
// lease would be exact; a clock allowance would drop every quick try's).
func (c *stepClaim) before(a *AgentState) time.Duration {
	if c == nil || c.triedBefore == 0 {
		return 0
	}
	// Entries keep their time to the millisecond: one landed in the
	// millisecond of its try's claim is that try's.
	if a != nil && len(a.Entries) > 0 && !a.Entries[len(a.Entries)-1].Time.Before(c.triedFrom.Truncate(time.Millisecond)) {
		return 0
	}
	return c.triedBefore
}

// ErrStepLeaseRunOut stops a step's model call once its lease may have run
// out: its renewals failed (the store unreachable) for longer than the
// lease surely lasts, so another replica may have claimed the step and be
// calling the same model. Going on would pay for the step twice, and its
// landing would be refused (fenced) if the other claimed it. It is an
// outage: a run pauses and launches from the ledger once the store
// answers, the stopped call's spend recorded as a cancelled call's.
var ErrStepLeaseRunOut = fmt.Errorf("the step's lease may have run out while the store was unreachable, so its model call was stopped (another replica may be running it): %w", ErrStoreUnavailable)

// whileSure is ctx, ended with ErrStepLeaseRunOut once the claim's lease
// may have run out, or with ErrLeaseLost once it was lost, for the step's
// model call; done ends it once the call returned. A nil claim (a store
// without step leases) never runs out.
func (c *stepClaim) whileSure(ctx context.Context) (_ context.Context, done func()) {
	if c == nil {
		return ctx, func() {}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	c.stopMu.Lock()
	if c.stopped != nil { // before the call began
		cancel(c.stopped)
	}
	c.stopCall = cancel
	c.stopMu.Unlock()
	return cctx, func() {
		c.stopMu.Lock()
		c.stopCall = nil
		c.stopMu.Unlock()
		cancel(nil)
	}
}

// ranOut stops the claim's model call, if one runs, and one yet to begin,
// for why: its lease may have run out (ErrStepLeaseRunOut) or was lost.
func (c *stepClaim) ranOut(why error) {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	c.stopped = why
	if c.stopCall != nil {
		c.lz.log.Warn().Err(why).Str("session", c.id).Str("lease", "step of "+c.agent).Msg("stopping the step's model call so it is not paid for twice")
		c.stopCall(why)
	}
}

// ranOutNoMore lets a call yet to begin go on: a renewal was taken since
// the lease might have run out, so no other process had claimed it.
func (c *stepClaim) ranOutNoMore() {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if errors.Is(c.stopped, ErrStepLeaseRunOut) {
		c.stopped = nil
	}
}

// errLanding is a renewal skipped because a landing holds the claim: the
// landing fences the lease itself, and may be waiting on a busy store, which
// the heartbeat must not wait for.
var errLanding = errors.New("a landing holds the step lease")

// renew is the heartbeat's renewal of the lease, none once a landing
// released it or the claim was released. A lease lost to another claim is
// closed as lost here, under mu, so a release that follows sees it.
func (c *stepClaim) renew(ctx context.Context) error {
	if !c.mu.TryLock() {
		return errLanding
	}
	defer c.mu.Unlock()
	if c.landed || c.released {
		return nil
	}
	_, err := c.ls.RenewStep(ctx, c.id, c.agent, c.version, c.ttl)
	if errors.Is(err, ErrLeaseLost) {
		if c.doubt {
			return nil
		}
		close(c.lost) // once: a claim found lost is renewed no more (stepBeats)
	}
	return err
}

// fence tells whether the step may land: its lease is still its own. A
// lease lost to another claim (seen by the heartbeat, or read now: another
// version, or released) refuses the landing with ErrLeaseLost; a read that
// fails for another reason does not, the heartbeat having the same
// tolerance. A read, not a renewal: on disk a renewal is a locked, fsynced
// write, which doubled a step's overhead. inWrite (a LeasedLanding, which
// checks the lease in the landing's own write) skips the read.
func (c *stepClaim) fence(ctx context.Context, inWrite bool) error {
	if c == nil {
		return nil
	}
	lost := false
	select {
	case <-c.lost:
		lost = true
	default:
		if inWrite {
			return nil
		}
		all, err := c.ls.ReadSteps(context.WithoutCancel(ctx), c.id)
		l := all[c.agent]
		lost = err == nil && (l == nil || l.Version != c.version || l.Released)
	}
	if lost {
		return StepLeaseLost(c.id, c.agent)
	}
	return nil
}

// StepLeaseLost is the error of a step not recorded because its lease was
// lost (ErrLeaseLost), in the words every fence uses.
func StepLeaseLost(id, agent string) error {
	return fmt.Errorf("the step of agent %q in session %q was not recorded: another process claimed it after this one failed to renew its lease in time; step the agent again: %w",
		agent, id, ErrLeaseLost)
}

// land lands e through a store that fences it by the lease and releases
// the lease in the same write (LeasedLanding), and by the session's cancels
// (cancels: the count the step began with). It holds mu throughout, so
// no renewal runs beside the write or after its release. The heartbeat
// keeps beating until release: a landing that fails for an outage is tried
// again, and the lease must stay this step's meanwhile.
func (c *stepClaim) land(ctx context.Context, ll LeasedLanding, e Entry, cancels int) (Entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, released, err := ll.LandLeased(ctx, e, c.version, cancels)
	switch {
	case err == nil:
		c.landed = released
	case c.down != nil && c.down(err):
		c.doubt = true
	}
	return out, err
}

// release stops the heartbeat and releases the lease, unless the landing
// did; safe to call more than once, and on nil.
func (c *stepClaim) release() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		// Under mu, which a renewal holds throughout: one under way ends
		// first, and none follows.
		c.mu.Lock()
		c.released = true
		landed := c.landed
		c.mu.Unlock()
		c.lz.steps.drop(c)
		if landed {
			return
		}
		select {
		case <-c.lost:
		default:
			// Without the caller's context: a cancelled step still releases
			// its lease, or it would read interrupted until it expires.
			err := c.ls.ReleaseStep(context.Background(), c.id, c.agent, c.version)
			switch {
			case c.down != nil && c.down(err):
				// The store is unreachable: keep trying in the background for
				// as long as the lease would live, so the agent's next step
				// (after the outage) does not wait out the whole expiry.
				go c.retryRelease()
			case err != nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrSessionNotFound):
				// Left to expire: the step reads in flight until then, and
				// the agent's next step waits for it.
				c.lz.log.Warn().Err(err).Str("session", c.id).Str("agent", c.agent).Msg("could not release a step's lease; it expires on its own")
			}
		}
	})
}

// deadSteps names the agents of a running (or interrupted) session whose
// step in flight died without landing, its lease abandoned, with when each
// was last alive. A step that never claimed a lease, or landed, is not one.
func (svc *Service) deadSteps(ctx context.Context, id string, res *TeamResult) map[string]time.Time {
	ls, ok := svc.store.(StepLeaseStore)
	if !ok || res == nil || (res.Status != StatusRunning && res.Status != StatusInterrupted) {
		return nil
	}
	leases, err := ls.ReadSteps(ctx, id)
	if err != nil {
		svc.log.Warn().Err(err).Str("session", id).Msg("could not read the step leases; agents are shown without them")
		return nil
	}
	now := svc.now()
	dead := map[string]time.Time{}
	for agent, l := range leases {
		if l.Abandoned(now) {
			dead[agent] = l.Renewed
		}
	}
	return dead
}
