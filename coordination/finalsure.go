package coordination

import (
	"context"
	"fmt"
	"time"
)

// ErrRunLeaseRunOut stops a run's final call once the run's lease may have
// run out: its renewals failed (the store unreachable) for longer than the
// lease surely lasts, so another replica may have taken the decided session
// up and be making the same call. Going on would pay for the session's
// dearest call twice, and its finish would be refused. It is an outage: the
// run waits for the store, confirms its claim, and makes the call again
// only if the session is still its own; the stopped call's spend is
// recorded as a cancelled call's. A step's model call stops alike
// (ErrStepLeaseRunOut).
var ErrRunLeaseRunOut = fmt.Errorf("the run's lease may have run out while the store was unreachable, so its final call was stopped (another replica may be making it): %w", ErrStoreUnavailable)

// whileSure is ctx ended with ErrRunLeaseRunOut once the claim's lease
// may have run out (holds), or with ErrLeaseLost once it was lost, for a
// final call, a run's or a Finalize's; done ends it once the call is over.
// A run made by a test holds no claim (nil), and its ctx is left as it is.
func (c *runClaim) whileSure(ctx context.Context) (_ context.Context, done func()) {
	if c == nil {
		return ctx, func() {}
	}
	sctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for {
			until, lost := c.holds()
			if lost {
				cancel(ErrLeaseLost)
				return
			}
			wait := time.Until(until)
			if wait <= 0 {
				cancel(ErrRunLeaseRunOut)
				return
			}
			// Looked at again when it would run out: a renewal taken
			// meanwhile moved it on.
			t := time.NewTimer(wait)
			select {
			case <-c.lost:
				t.Stop()
				cancel(ErrLeaseLost)
				return
			case <-sctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return sctx, func() { cancel(nil) }
}

// writeFinalWhileSure is writeFinalFrom with its final call bounded by the
// lease of c, the run's or the Finalize's claim (whileSure): a call stopped because the lease may have run
// out, or was lost, returns that (an outage, or ErrLeaseLost) for the
// caller to wait out or stop on, rather than the context's end, which a
// caller reads as a cancel.
// Only a store that can be unreachable while this process lives (an
// OutageStore: PostgreSQL) bounds it, as a step's call (stepClaim's
// canRunOut): the memory and file stores' renewals wait on no network,
// and a stall of this process (a laptop's sleep) is no other replica's
// chance to take the session up.
func (svc *Service) writeFinalWhileSure(ctx context.Context, c *runClaim, s *Session, final FinalStrategy, d *finalDraft) (*TeamResult, error) {
	if _, canRunOut := svc.store.(OutageStore); !canRunOut {
		return svc.writeFinalFrom(ctx, s, final, d)
	}
	sctx, done := c.whileSure(ctx)
	defer done()
	res, err := svc.writeFinalFrom(sctx, s, final, d)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		err = context.Cause(sctx)
	}
	return res, err
}
