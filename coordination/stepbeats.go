package coordination

import (
	"context"
	"errors"
	"sync"
	"time"
)

// stepBeats renews every step lease a service holds from one goroutine,
// alive while any is held, rather than a goroutine, three channels and a
// ticker a step: a thousand sessions start four thousand steps a round, and
// that per-step heartbeat, which a one-second step never even reached, cost
// a quarter of a memory-store step's CPU (docs/BENCHMARKS.md, "One heartbeat
// for a service's steps").
//
// It ticks four times a heartbeat and renews the claims last renewed (or
// taken) a heartbeat ago or more: each is renewed between one and one and a
// quarter heartbeats apart, well inside the lease's time (at least two
// heartbeats), and a step shorter than a heartbeat, most of them, is never
// renewed, as before. Each renewal runs on its own (a database store batches
// those that meet), so a slow one holds up no other claim's; a claim whose
// renewal is still under way is not renewed again, and one whose renewal
// failed, or was skipped for a landing under way, is due again at the next
// tick.
type stepBeats struct {
	mu     sync.Mutex
	claims map[*stepClaim]*beatState
	idle   chan struct{} // the running goroutine's: closed when the last claim goes; nil when none runs
}

// beatState is one claim's place in the heartbeat.
type beatState struct {
	last     time.Time // renewed, or taken
	renewing bool
	// sure is when the last claim or renewal the store took was sent: the
	// lease lasts a TTL from then at least (runClaim.holds' rule). Past
	// that, less the clock margin, another process may claim the step.
	sure   time.Time
	ranOut bool // the claim's call was told so (stepClaim.ranOut)
}

// hold adds a claim, starting the heartbeat if none runs.
func (b *stepBeats) hold(lz *leases, c *stepClaim) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.claims == nil {
		b.claims = map[*stepClaim]*beatState{}
	}
	now := time.Now()
	b.claims[c] = &beatState{last: now, sure: c.sent}
	if b.idle == nil {
		b.idle = make(chan struct{})
		go lz.beatSteps(b.idle)
	}
}

// drop removes a claim, stopping the heartbeat with the last one.
func (b *stepBeats) drop(c *stepClaim) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.claims[c]; !ok {
		return
	}
	delete(b.claims, c)
	if len(b.claims) == 0 && b.idle != nil {
		close(b.idle)
		b.idle = nil
	}
}

// due lists the claims to renew now (last renewed every or longer ago, no
// renewal under way) and marks them under way, and the claims whose lease
// may have run out: no renewal taken for surely, and none under way (a
// renewal gives up within a heartbeat, so a slow one is waited for, not
// taken for a lost one). ok is false once idle is no longer the running
// goroutine's, which then stops. The caller stops the calls of those that
// ran out, after the lock: a stop logs.
func (b *stepBeats) due(idle chan struct{}, every, surely time.Duration) (out []dueRenewal, ranOut []*stepClaim, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idle != idle {
		return nil, nil, false
	}
	now := time.Now()
	for c, st := range b.claims {
		if c.canRunOut && !st.ranOut && !st.renewing && now.Sub(st.sure) >= surely {
			st.ranOut = true
			ranOut = append(ranOut, c)
		}
		if !st.renewing && now.Sub(st.last) >= every {
			st.renewing = true
			r := dueRenewal{c: c, until: now.Add(every)}
			if c.canRunOut && !st.ranOut {
				// A renewal waited for must not hold the stop past the
				// moment the lease may have run out.
				if cut := st.sure.Add(surely); cut.Before(r.until) {
					r.until = cut
				}
			}
			out = append(out, r)
		}
	}
	return out, ranOut, true
}

// dueRenewal is a claim to renew and when its renewal gives up.
type dueRenewal struct {
	c     *stepClaim
	until time.Time
}

// renewed ends a claim's renewal: done (sent when it was sent: the next is
// due a heartbeat after, however long this one took), or due again at the
// next tick. A renewal taken after the lease might have run out proves it
// had not (another claim would have refused it): the claim's calls may go
// on again.
func (b *stepBeats) renewed(c *stepClaim, ok bool, sent time.Time, every time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.claims[c]
	if st == nil {
		return
	}
	st.renewing = false
	if ok {
		st.last, st.sure = sent, sent
		if st.ranOut {
			st.ranOut = false
			c.ranOutNoMore()
		}
	} else {
		st.last = time.Now().Add(-every)
	}
}

// beatSteps renews the step leases that are due, every quarter heartbeat,
// until idle is closed or is no longer the running goroutine's.
func (lz *leases) beatSteps(idle chan struct{}) {
	t := time.NewTicker(lz.heartbeat / 4)
	defer t.Stop()
	for {
		select {
		case <-idle:
			return
		case <-t.C:
		}
		due, ranOut, ok := lz.steps.due(idle, lz.heartbeat, lz.ttl-min(MaxClockSkew, lz.ttl/4))
		if !ok {
			return
		}
		for _, c := range ranOut {
			c.ranOut(ErrStepLeaseRunOut)
		}
		for _, r := range due {
			go lz.renewStep(r.c, r.until)
		}
	}
}

// renewStep renews one step lease. A lease lost to another claim (renew
// closed it as lost: the landing's fence refuses it) is renewed no more; a
// renewal that fails for another reason (a full disk), or that a landing
// under way made wait, is tried again at the next tick, the lease expiring
// if none succeeds in time.
func (lz *leases) renewStep(c *stepClaim, until time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), until)
	sent := time.Now()
	err := c.renew(ctx)
	cancel()
	switch {
	case errors.Is(err, ErrLeaseLost):
		lz.log.Warn().Err(err).Str("session", c.id).Str("lease", "step of "+c.agent).Msg("this lease was claimed by another process; stopping without writing")
		lz.steps.drop(c)
		c.ranOut(err) // another process runs the step: this call is paid for in vain
	case errors.Is(err, errLanding):
		lz.steps.renewed(c, false, sent, lz.heartbeat)
	case err != nil:
		lz.log.Warn().Err(err).Str("session", c.id).Str("lease", "step of "+c.agent).Msg("could not renew the lease; trying again at the next heartbeat")
		lz.steps.renewed(c, false, sent, lz.heartbeat)
	default:
		lz.steps.renewed(c, true, sent, lz.heartbeat)
	}
}
