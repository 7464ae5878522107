package coordination

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// RunSlot takes one of this server's slots for a run about to start here,
// or refuses (the server at its limit of running teams); release hands the
// slot back.
type RunSlot func(ctx context.Context) (release func(), err error)

// RunSlotRetry is how long a caller refused a run slot (NotStartedError's
// AtLimit) is told to wait before it asks again: the surfaces' Retry-After
// and retry hints. A slot frees when one of the running teams ends, which
// nothing here can foresee (a team of real models runs from under a minute
// to many, each step a model call of seconds to minutes), so this is a
// constant, not a promise. Half a minute lets a team or two end meanwhile
// without leaving the caller idle long once one has; and it is within the
// 60 s that OpenAI's Python SDK honours (past it, that SDK retries after
// its own backoff of a few seconds, into the same refusal), so that SDK's
// two retries wait a minute in all for a slot.
const RunSlotRetry = 30 * time.Second

// NotStartedError is StartOrFollow's refusal of a run before it started:
// no slot was free here (AtLimit) or the start failed (Err says why).
// Left says the session, created by this service for that run, now reads
// cancelled, saying why (NotStarted), so that its caller can be told to
// run it later rather than create another.
type NotStartedError struct {
	Err     error
	AtLimit bool
	Left    bool
}

func (e *NotStartedError) Error() string { return e.Err.Error() }
func (e *NotStartedError) Unwrap() error { return e.Err }

// maxTakeovers bounds how many times one caller's run takes up a followed
// run whose holder stopped: each is a claim, refused at once when another
// replica took it first, so this only guards a session that keeps reading
// interrupted.
const maxTakeovers = 3

// StartOrFollow is how a caller that wants a session's result gets its
// run: started here, or the one going on here joined, or, with follow, the
// one another process or replica holds followed. A slot is taken from slot
// unless the run already goes on here; a call that turns out not to start
// the run (another caller started it first) gives the slot straight back,
// and a run it started keeps it until the run ends. A run held elsewhere
// is followed without a slot: nothing runs here for it.
//
// A followed run whose holder stops without ending it (died, or handed it
// over while no replica had taken it up yet) reads interrupted: the caller
// asked for its end, so the run returned takes it up here, or follows the
// replica that took it up first, up to maxTakeovers times, unless ctx has
// ended. A takeover that cannot start (no slot here) ends the returned run
// with the followed run's interrupted result. started is true only for a
// run this call started at once: a run taken up later was asked for by
// nobody, so its caller going away does not cancel it.
//
// Without follow, a run held elsewhere is ErrSessionRunning. Any other
// refusal before the run started is a *NotStartedError.
func (svc *Service) StartOrFollow(ctx context.Context, id string, slot RunSlot, follow bool) (run *Run, started bool, err error) {
	run, started, followed, err := svc.startOrFollowOnce(ctx, id, slot, follow, -1)
	if err != nil || !followed {
		return run, started, err
	}
	return svc.takeUpWhenStopped(ctx, id, slot, run), false, nil
}

// startOrFollowOnce is StartOrFollow without the takeovers; followed says
// the run is another process's, followed from here. A run it starts lifts
// the cancels the session had when its caller decided to start it
// (cancels; negative: counted as it starts, as Start does).
func (svc *Service) startOrFollowOnce(ctx context.Context, id string, slot RunSlot, follow bool, cancels int) (run *Run, started, followed bool, err error) {
	release := func() {}
	elsewhere := false
	if _, running := svc.Running(id); !running {
		if release, err = slot(ctx); err != nil {
			if !svc.HeldElsewhere(ctx, id) {
				return nil, false, false, svc.notStartedError(ctx, id, err, true)
			}
			release, elsewhere = func() {}, true
		}
	}
	if elsewhere {
		err = fmt.Errorf("%w: it runs on another replica", ErrSessionRunning)
	} else {
		run, started, err = svc.start(ctx, id, cancels)
	}
	if errors.Is(err, ErrSessionRunning) && follow {
		run, err = svc.Follow(ctx, id)
		followed = err == nil
	}
	if err != nil {
		release()
		if !errors.Is(err, ErrSessionRunning) {
			err = svc.notStartedError(ctx, id, err, false)
		}
		return nil, false, false, err
	}
	run.HoldUntilDone(started, release)
	return run, started, followed, nil
}

// StartRefused records that session id, if this service created it for the
// run that err refused before it started, was not started (NotStarted),
// and returns err as a *NotStartedError saying whether it did. The record
// keeps no more of err than a client may read: keys masked, the server's
// paths hidden.
func (svc *Service) StartRefused(ctx context.Context, id string, err error) error {
	return svc.notStartedError(ctx, id, err, false)
}

func (svc *Service) notStartedError(ctx context.Context, id string, err error, atLimit bool) error {
	why := "its run could not start: " + providers.MaskKeys(svc.HidePaths(err.Error()))
	if atLimit {
		why = "the server was at its limit of running teams"
	}
	left, nerr := svc.NotStarted(context.WithoutCancel(ctx), id, why)
	if nerr != nil {
		svc.log.Warn().Err(nerr).Str("session", id).Msg("a session created for a run that was refused still reads running")
	}
	return &NotStartedError{Err: err, AtLimit: atLimit, Left: left}
}

// takeUpWhenStopped is a run that ends with followed, unless followed ends
// interrupted (its holder stopped): then it takes the session's run up
// here, or follows whoever took it up first (StartOrFollow). Cancelling it
// cancels the run it waits on at the time. A takeover lifts only the
// cancels of the follower's read that found the run interrupted (Run.seen),
// as ResumeInterrupted lifts its listing's: a cancel recorded between that
// read and the takeover's claim stops the run taken up, as the cancel
// answered, rather than being lifted by it.
func (svc *Service) takeUpWhenStopped(ctx context.Context, id string, slot RunSlot, followed *Run) *Run {
	var mu sync.Mutex
	current := followed
	r := &Run{ID: id, done: make(chan struct{}), cancels: followed.cancels}
	r.cancel = func(cause error) {
		mu.Lock()
		on := current
		mu.Unlock()
		on.cancel(cause)
	}
	go func() {
		defer close(r.done)
		on := followed
		for takeovers := 0; ; takeovers++ {
			<-on.done
			r.res, r.err = on.res, on.err
			if on.err != nil || on.res == nil || on.res.Status != StatusInterrupted || takeovers >= maxTakeovers || ctx.Err() != nil {
				return
			}
			svc.log.Info().Str("session", id).Msg("the run followed stopped with its holder; taking it up")
			next, started, followed, err := svc.startOrFollowOnce(ctx, id, slot, true, on.seen)
			if err != nil {
				// The caller gets the run it followed as it ended,
				// interrupted, with what to do next.
				svc.log.Info().Err(err).Str("session", id).Msg("could not take up the run followed")
				return
			}
			mu.Lock()
			current = next
			mu.Unlock()
			on = next
			if started || !followed {
				// Run here now: its end is the end.
				<-on.done
				r.res, r.err = on.res, on.err
				return
			}
		}
	}()
	return r
}
