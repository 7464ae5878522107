package coordination

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// overLater records the end of outage o, which who waited (what) stopped
// waiting for while it went on (ctx ended in the pause: a step's caller
// gone, its session cancelled, its run stopped), once the store answers
// again: "…; the step of agent_a waited, then stopped: its caller
// stopped waiting for it". Without it a step-driven session's timeline
// kept the step's start and nothing after, the progress's last word
// saying it waited and tried again: no run records such a step's stop,
// as a run's own stop records its own (its cancel, "the run's end
// waited…"). The timeline's write is the probe, tried again the outage's
// way for usageGrace, as the step's spend is (recordUsageLater); the
// duration it says runs to the write that went through, within a
// backoff of the store's return.
func (svc *Service) overLater(ctx context.Context, id, what string, o outage) {
	why := svc.endedWhy(ctx)
	lctx, done := outlive(ctx, usageGrace)
	defer done()
	for tries := 0; ; tries++ {
		t := time.NewTimer(outageWait(tries))
		select {
		case <-lctx.Done():
			t.Stop()
			svc.log.Warn().Str("session", id).Str("waiting", what).AnErr("last", o.last).
				Msg("gave up recording the end of an outage: the store stayed unreachable")
			return
		case <-t.C:
		}
		msg := svc.outageEnd(&o, what, "waited, then stopped: "+why)
		err := svc.store.AppendEvent(lctx, id, Event{Type: "store_outage", Message: msg, Time: svc.opts.Now().UTC()})
		switch {
		case err == nil:
			svc.log.Info().Str("session", id).AnErr("last", o.last).Msg(msg)
			svc.tell(Progress{SessionID: id, Kind: ProgressStoreOutage, Message: msg, Time: svc.now()})
			return
		case !svc.storeDown(err):
			if !errors.Is(err, ErrSessionNotFound) {
				svc.log.Warn().Err(err).Str("session", id).Msg("could not record the end of an outage")
			}
			return
		}
	}
}

// endedWhy is why ctx, whose holder waited out an outage, ended, as the
// session's record keeps it: a bare cancel or deadline is its caller's.
func (svc *Service) endedWhy(ctx context.Context) string {
	switch cause := context.Cause(ctx); cause {
	case nil, context.Canceled:
		return "its caller stopped waiting for it"
	case context.DeadlineExceeded:
		return "its caller's deadline passed"
	default:
		return svc.stoppedWhy(cause)
	}
}

// stoppedInOutage is the error of agent's step whose landing gave up
// because ctx ended while the store was unreachable (err, its last
// error): its caller is told why it stopped, what became of the step and
// where the rest is told, rather than a driver's error about a lock.
func (svc *Service) stoppedInOutage(ctx context.Context, agent string, err error) error {
	return fmt.Errorf("%s's step stopped because %s while %s: the model's reply was not recorded (step the agent again to run it anew), what its model call spent is recorded once the store answers, and the session's timeline records the outage's end once the store is back: %w",
		agent, svc.endedWhy(ctx), svc.unavailableFor(err, true), err)
}
