package coordination

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A server step holds its agent's step lease (leasestep.go) while its model
// call runs, taken after the agent's step lock: the lock keeps two steps of
// one agent apart on this host, the lease across hosts, and tells readers
// the step is alive (an abandoned one reads interrupted, stepStatus). Its
// landing is fenced by it: a step whose lease was lost writes nothing.

// stepClaim is a held step lease with its heartbeat; nil for a store
// without step leases.
type stepClaim struct {
	beat
	ls        StepLeaseStore
	id, agent string
	version   int64
	once      sync.Once
	down      func(error) bool // the store is unreachable (outage.go)
	ttl       time.Duration
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
	l, err := ls.AcquireStep(ctx, id, agent, ThisProcess(lz.owner), lz.ttl)
	if err != nil {
		return nil, err
	}
	c := &stepClaim{beat: newBeat(), ls: ls, id: id, agent: agent, version: l.Version, ttl: lz.ttl,
		down: func(err error) bool { return unreachable(lz.store, err) }}
	go lz.beat(&c.beat, id, "step of "+agent, func(ctx context.Context) error {
		_, err := ls.RenewStep(ctx, id, agent, c.version, lz.ttl)
		return err
	})
	return c, nil
}

// fence tells whether the step may land: its lease is still its own. A
// lease lost to another claim (seen by the heartbeat, or read now: another
// version, or released) refuses the landing with ErrLeaseLost; a read that
// fails for another reason does not, the heartbeat having the same
// tolerance. A read, not a renewal: on disk a renewal is a locked, fsynced
// write, which doubled a step's overhead.
func (c *stepClaim) fence(ctx context.Context) error {
	if c == nil {
		return nil
	}
	lost := false
	select {
	case <-c.lost:
		lost = true
	default:
		all, err := c.ls.ReadSteps(context.WithoutCancel(ctx), c.id)
		l := all[c.agent]
		lost = err == nil && (l == nil || l.Version != c.version || l.Released)
	}
	if lost {
		return fmt.Errorf("the step of agent %q in session %q was not recorded: another process claimed it after this one failed to renew its lease in time; step the agent again: %w",
			c.agent, c.id, ErrLeaseLost)
	}
	return nil
}

// release stops the heartbeat and releases the lease; safe to call more
// than once, and on nil.
func (c *stepClaim) release() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		select {
		case <-c.lost:
		default:
			// Without the caller's context: a cancelled step still releases
			// its lease, or it would read interrupted until it expires.
			err := c.ls.ReleaseStep(context.Background(), c.id, c.agent, c.version)
			if c.down != nil && c.down(err) {
				// The store is unreachable: keep trying in the background for
				// as long as the lease would live, so the agent's next step
				// (after the outage) does not wait out the whole expiry.
				go c.retryRelease()
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
