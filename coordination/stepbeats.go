package coordination

import (
	"context"
	"errors"
	"sync"
	"time"
)

// stepBeats renews every step lease a service holds from one goroutine that
// ticks every heartbeat while any is held, rather than a goroutine, three
// channels and a ticker a step: a thousand sessions start four thousand
// steps a round, and that per-step heartbeat, which a one-second step never
// even reached, cost more than a third of a memory-store step's
// bookkeeping (docs/BENCHMARKS.md, "One heartbeat for a service's steps").
// It ticks four times a heartbeat and renews the claims last renewed (or
// taken) a heartbeat ago or more: each is renewed between one and one and a
// quarter heartbeats apart, well inside the lease's time (at least two
// heartbeats), and a step shorter than a heartbeat, most of them, is never
// renewed, as before.
type stepBeats struct {
	mu     sync.Mutex
	claims map[*stepClaim]time.Time // when each was last renewed, or taken
	idle   chan struct{}            // closed to stop the goroutine when the last claim goes; nil when none runs
}

// hold adds a claim, starting the heartbeat if none runs.
func (b *stepBeats) hold(lz *leases, c *stepClaim) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.claims == nil {
		b.claims = map[*stepClaim]time.Time{}
	}
	b.claims[c] = time.Now()
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

// due lists the claims last renewed every or longer before now, and counts
// them renewed now.
func (b *stepBeats) due(now time.Time, every time.Duration) []*stepClaim {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*stepClaim
	for c, at := range b.claims {
		if now.Sub(at) >= every {
			out = append(out, c)
			b.claims[c] = now
		}
	}
	return out
}

// beatSteps renews the held step leases that are due until idle is
// closed. The renewals of a tick run at once (a database store batches
// those that meet) and the next tick waits for them, so one claim is never
// renewed twice at a time.
func (lz *leases) beatSteps(idle <-chan struct{}) {
	t := time.NewTicker(lz.heartbeat / 4)
	defer t.Stop()
	for {
		var now time.Time
		select {
		case <-idle:
			return
		case now = <-t.C:
		}
		var wg sync.WaitGroup
		for _, c := range lz.steps.due(now, lz.heartbeat) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lz.renewStep(c)
			}()
		}
		wg.Wait()
	}
}

// renewStep renews one step lease. A lease lost to another claim is closed
// as lost (the landing's fence refuses it) and renewed no more; a renewal
// that fails for another reason (a full disk) is tried again at the next
// tick, the lease expiring if none succeeds in time.
func (lz *leases) renewStep(c *stepClaim) {
	ctx, cancel := context.WithTimeout(context.Background(), lz.heartbeat)
	err := c.renew(ctx)
	cancel()
	switch {
	case errors.Is(err, ErrLeaseLost):
		lz.log.Warn().Err(err).Str("session", c.id).Str("lease", "step of "+c.agent).Msg("this lease was claimed by another process; stopping without writing")
		lz.steps.drop(c)
		close(c.lost)
	case err != nil:
		lz.log.Warn().Err(err).Str("session", c.id).Str("lease", "step of "+c.agent).Msg("could not renew the lease; trying again at the next heartbeat")
	}
}
