package coordination

import (
	"context"
	"time"
)

// followPoll is how often a follower reads a session again besides the
// store's watch: a watch that missed a change (a store that polls, a
// listener reconnecting) costs at most this much.
const followPoll = time.Second

// Follow is a run held elsewhere — by another process or by another
// replica sharing the store — as a Run this service can wait on, for a
// caller that wants to join it rather than start one: Done closes once the
// session stops running (finished, decided, cancelled, failed, or
// interrupted when its holder died), and Result is the session's result
// then. Cancel marks the session cancelled (Service.Cancel), which the
// holder's loop hears through its watch. The follower reads the session on
// every change the store's Watch reports; it ends with the run, or when ctx
// ends (then Result is the session as it stood, with ctx's error).
func (svc *Service) Follow(ctx context.Context, id string) (*Run, error) {
	if _, err := svc.sessions.get(ctx, id); err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	changes, err := svc.store.Watch(wctx, id)
	if err != nil {
		stop()
		return nil, err
	}
	r := &Run{ID: id, done: make(chan struct{})}
	r.cancel = func(error) {
		if _, err := svc.Cancel(context.WithoutCancel(ctx), id); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Msg("could not cancel the session followed")
		}
	}
	go func() {
		defer close(r.done)
		defer stop()
		tick := time.NewTicker(followPoll)
		defer tick.Stop()
		for {
			res, err := svc.Result(context.WithoutCancel(ctx), id)
			if err != nil {
				r.err = err
				return
			}
			r.res = res
			if res.Status != StatusRunning {
				return
			}
			select {
			case <-ctx.Done():
				r.err = ctx.Err()
				return
			case <-changes:
			case <-tick.C:
			}
		}
	}()
	return r, nil
}
