package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// How long a call waits on a session's run (run_team, checkpoint).
type runWait int

const (
	waitNot     runWait = iota // start it and return
	waitLimited                // up to Options.WaitLimit (pending.go)
	waitToEnd                  // until it ends (run_team{wait: true})
)

// waitRun starts a session's run, or joins the one going on, and waits on
// it as asked, reporting its progress to the request. A run it starts takes
// a run slot until it ends. It returns the run with ended true once it has
// ended. A request that goes away stops waiting: if it started the run, the
// run is cancelled first (and has ended); otherwise the error says so.
func (h *handler) waitRun(ctx context.Context, req mcpgo.CallToolRequest, id string, how runWait) (run *coordination.Run, ended bool, err error) {
	if how == waitNot {
		run, _, err = h.startOrFollow(ctx, req, id, how)
		return run, false, err
	}
	// The progress is subscribed to before the run starts: with fast models
	// a run can end before a later Subscribe.
	var p *progress
	var heard *coordination.Subscription
	if p = h.startProgress(ctx, req); p != nil {
		if heard, err = h.hearProgress(ctx, id); err != nil {
			p.stop()
			// A session this call created must not be left to read
			// interrupted a minute on, for a replica to run unasked.
			return nil, false, h.notStarted(ctx, req.Params.Name, id, err)
		}
		defer heard.Close()
	}
	var limit <-chan time.Time
	if how == waitLimited {
		t := time.NewTimer(h.opts.WaitLimit)
		defer t.Stop()
		limit = t.C
	}
	// A human agent's question ends the wait when this caller can ask
	// (human.go, askHumans; one that has asked its rounds returns the run
	// as it stands, and its next call asks); one that cannot waits on.
	defer h.questions.watch(tenantOf(ctx), id)()
	var asked <-chan struct{}
	askable := canElicit(ctx) == nil
	if askable {
		asked = h.questions.posted(tenantOf(ctx), id)
	}
	// A store that shares questions (human.go) is read for them, whichever
	// replica's run asked.
	var sharedAsked <-chan time.Time
	if askable && h.svc(ctx).SharesQuestions() {
		t := time.NewTicker(sharedQuestionsPoll)
		defer t.Stop()
		sharedAsked = t.C
	}
	cancelled := false
	for takeovers := 0; ; takeovers++ {
		var started bool
		followed := run
		if run, started, err = h.startOrFollow(ctx, req, id, how); err != nil {
			if followed != nil {
				// The takeover could not start (this server at its limit
				// of runs, say): the caller gets the run it followed as it
				// ended, interrupted, with what to do next.
				h.log.Info().Err(err).Str("session", id).Msg("could not take up the run this call followed")
				run = followed
				break
			}
			p.stop()
			return nil, false, err
		}
		// Only the request that started a run may cancel it by going
		// away; one that merely waits on a run started by another just
		// stops waiting, and so does one whose server took up a run whose
		// holder stopped (nobody asked it to start that run).
		owner := started && takeovers == 0
		over := false
	waiting:
		for {
			select {
			case <-heard.Ready():
				p.tell(heard.Take())
			case <-run.Done():
				over = true
				break waiting
			case <-limit:
				break waiting
			case <-asked:
				if len(h.questions.pending(tenantOf(ctx), id)) > 0 {
					break waiting
				}
				asked = h.questions.posted(tenantOf(ctx), id) // answered meanwhile
			case <-sharedAsked:
				if len(h.openQuestions(ctx, id)) > 0 {
					break waiting
				}
			case <-ctx.Done():
				// Ended by the server's own stop, the request leaves its run
				// to that stop, which cancels it or hands it over.
				if owner && !h.stopping() {
					run.CallerLeft()
					<-run.Done()
				}
				cancelled = true
				break waiting
			}
		}
		// A run followed elsewhere whose holder stopped (died, or handed
		// it over while no replica had taken it up yet) reads interrupted:
		// the caller asked to wait for its end, so this server takes it
		// up, or follows the replica that took it up first.
		if !over || started || takeovers >= maxTakeovers || !h.followedStopped(run) {
			break
		}
		h.log.Info().Str("session", id).Msg("the run this call followed stopped with its holder; taking it up")
	}
	// Progress must be fully written before the result (see progress.go):
	// what the run told before it ended is all queued.
	p.tell(heard.Take())
	heard.Close()
	p.stop()

	select {
	case <-run.Done():
		return run, true, nil
	default:
		if cancelled {
			return run, false, fmt.Errorf("stopped waiting for %s: %w", id, context.Cause(ctx))
		}
		return run, false, nil
	}
}

// notStarted is err, the refusal of a run of session id before it started;
// a session this call (of tool) created for that run is left cancelled, and
// the error names it so that the caller resumes it rather than create
// another.
func (h *handler) notStarted(ctx context.Context, tool, id string, err error) error {
	why := "its run could not start: " + providers.MaskKeys(h.svc(ctx).HidePaths(err.Error()))
	if errors.Is(err, errTooManyRuns) {
		why = "the server was at its limit of running teams"
	}
	left, cerr := h.svc(ctx).NotStarted(context.WithoutCancel(ctx), id, why)
	if cerr != nil {
		h.log.Warn().Err(cerr).Str("session", id).Msg("a session created for a run that was refused still reads running")
	}
	if !left {
		return err
	}
	return fmt.Errorf("%w (session %s was created but not started, and reads cancelled: run it later with %s{session_id: %q})", err, id, tool, id)
}

// maxTakeovers bounds how many times one call takes up a followed run
// whose holder stopped: each is a claim, refused at once when another
// replica took it first, so this only guards a session that keeps
// reading interrupted.
const maxTakeovers = 3

// startOrFollow starts a session's run here, or joins the one going on
// here, or follows the one another process or replica holds. A run slot is
// taken unless the run is already going; the call that turns out not to
// start it (another request started it first) gives the slot straight
// back. A run held by another replica is followed without one: this server
// runs nothing for it. A session this call created and could not start is
// left cancelled, not running with nothing running it (notStarted).
func (h *handler) startOrFollow(ctx context.Context, req mcpgo.CallToolRequest, id string, how runWait) (run *coordination.Run, started bool, err error) {
	release := func() {}
	elsewhere := false
	if _, running := h.svc(ctx).Running(id); !running {
		if release, err = h.runs.acquire(tenantOf(ctx)); err != nil {
			if !h.svc(ctx).HeldElsewhere(ctx, id) {
				return nil, false, h.notStarted(ctx, req.Params.Name, id, err)
			}
			release, elsewhere = func() {}, true
		}
	}
	if elsewhere {
		err = fmt.Errorf("%w: it runs on another replica", coordination.ErrSessionRunning)
	} else {
		run, started, err = h.svc(ctx).Start(ctx, id)
	}
	if errors.Is(err, coordination.ErrSessionRunning) && how != waitNot {
		// Another process or replica runs it: wait on that run instead.
		run, err = h.svc(ctx).Follow(ctx, id)
	}
	if err != nil {
		release()
		if run == nil && !errors.Is(err, coordination.ErrSessionRunning) {
			err = h.notStarted(ctx, req.Params.Name, id, err)
		}
		return nil, false, err
	}
	run.HoldUntilDone(started, release)
	return run, started, nil
}

// followedStopped tells whether a followed run ended because its holder
// stopped without ending it: the session reads interrupted.
func (h *handler) followedStopped(run *coordination.Run) bool {
	res, err := run.Result()
	return err == nil && res != nil && res.Status == coordination.StatusInterrupted
}
