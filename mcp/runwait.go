package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
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
	// A run followed elsewhere whose holder stops is taken up here
	// (coordination.Service.StartOrFollow): the caller asked to wait for
	// its end.
	run, started, err := h.startOrFollow(ctx, req, id, how)
	if err != nil {
		p.stop()
		return nil, false, err
	}
	// Only the request that started a run may cancel it by going away;
	// one that merely waits on a run started by another just stops
	// waiting, and so does one whose server took up a run whose holder
	// stopped (nobody asked it to start that run).
	cancelled := false
waiting:
	for {
		select {
		case <-heard.Ready():
			p.tell(heard.Take())
		case <-run.Done():
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
			if started && !h.stopping() {
				run.CallerLeft()
				<-run.Done()
			}
			cancelled = true
			break waiting
		}
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
// a session this call (of tool) created for that run is left cancelled
// (coordination.Service.StartRefused).
func (h *handler) notStarted(ctx context.Context, tool, id string, err error) error {
	return namedNotStarted(tool, id, h.svc(ctx).StartRefused(ctx, id, err))
}

// namedNotStarted names, in a refusal that left the session it created
// cancelled, the session to run later, so that the caller resumes it rather
// than create another.
func namedNotStarted(tool, id string, err error) error {
	if ns, ok := errors.AsType[*coordination.NotStartedError](err); ok && ns.Left {
		return fmt.Errorf("%w (session %s was created but not started, and reads cancelled: run it later with %s{session_id: %q})", err, id, tool, id)
	}
	return err
}

// startOrFollow is coordination.Service.StartOrFollow with this server's
// run slots, following a run held elsewhere unless the call only starts
// one (how is waitNot). A session this call created and could not start is
// left cancelled, and the error names it so that the caller runs it later
// rather than create another.
func (h *handler) startOrFollow(ctx context.Context, req mcpgo.CallToolRequest, id string, how runWait) (*coordination.Run, bool, error) {
	slot := func(context.Context) (func(), error) { return h.runs.acquire(tenantOf(ctx)) }
	run, started, err := h.svc(ctx).StartOrFollow(ctx, id, slot, how != waitNot)
	return run, started, namedNotStarted(req.Params.Name, id, err)
}
