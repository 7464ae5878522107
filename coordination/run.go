package coordination

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Progress is one thing worth telling a waiting caller while a run goes on.
type Progress struct {
	SessionID string       `json:"session_id"`
	Kind      ProgressKind `json:"kind"`
	Agent     string       `json:"agent_id,omitempty"`
	Message   string       `json:"message"`
	Steps     int          `json:"steps"`
	Standing  int          `json:"standing"` // standing votes now
	Live      int          `json:"live"`     // agents not dropped
	Time      time.Time    `json:"timestamp"`
}

// Run is a session's run loop in this process. Its progress is heard
// through the service's subscriptions (ObservedProgress).
type Run struct {
	ID     string
	cancel context.CancelCauseFunc
	// late is the context of the work a timeout leaves the run to do (its
	// final call): the timeout cancels the run's context, so a cancel or a
	// shutdown that comes after it ends this one instead (stopRun). nil
	// for a run made by a test.
	late context.Context
	done chan struct{}
	res  *TeamResult
	err  error

	// told is, per agent, the step of its latest entry the run's progress
	// has reported, and newest is the newest state a landing of the run's
	// own has left: the loop's goroutine alone reads and writes them.
	told   map[string]int
	newest *State

	// cancels is how many cancels the session had when this run was asked
	// for: the run lifts those, never a later one (cancelfence.go).
	cancels int
	// seen is, for a run followed elsewhere (Follow), how many cancels the
	// session had in the read its result is (the last one): a takeover of
	// the run that read found interrupted lifts those, never a cancel
	// recorded after it (takeUpWhenStopped). Written before done closes.
	seen int
	// resumeErr is why Start could not lift those cancels before it
	// returned (the store unreachable): the loop waits that out and lifts
	// them first thing. nil: lifted, or none to lift.
	resumeErr error
	// created says the session was created by this service for this run
	// and no run ever claimed it (not a start that failed and was tried
	// again, nor one another replica took up): no step of it can have died
	// mid-call.
	created bool

	// leaveLease is set by the loop when the store never took the record
	// of why the run stopped (whileDown): the run's lease is left to
	// expire instead of released, so the session reads interrupted.
	leaveLease bool
	// leftQuestions: the run started with questions a dead run left,
	// which its end closes if no step took them (closeLeftQuestions).
	leftQuestions bool
	// handOver is set by a run stopped to be handed over (Options.HandOver):
	// its lease is made to expire at once (runClaim.handOver).
	handOver bool
	// claim is the run's lease, which a stop's record waits for the store
	// within (whileDown); nil for a run made by a test.
	claim *runClaim
}

// landed notes the state a step of the run's own left and returns the newest
// state the loop has seen, by its entries: results reach the loop in any
// order, so the state of the result just received may hold fewer votes than
// one received before it. (Only the progress counts from it: the loop
// launches from the state just received, which may hold a session entry,
// such as a re-vote, that a state with as many steps does not.)
func (r *Run) landed(st *State) *State {
	if st != nil && (r.newest == nil || st.Steps > r.newest.Steps) {
		r.newest = st
	}
	return r.newest
}

// counted says whether a standing vote sv had landed, as the run's progress
// tells it, by the time vote v did, and marks v told. The run's own steps
// are counted in the order their results reach the loop, not by timestamp:
// stores keep timestamps to the millisecond, and a timestamp is taken before
// its step lands, so parallel votes tie or land out of order (3 votes read
// "3 of 3" each). A vote of an agent whose step is still in flight (own) is
// reported when it arrives; any other vote (an earlier run's, a host's) by
// its timestamp. Called on the loop's goroutine only.
func (r *Run) counted(own map[string]bool) func(sv, v *Entry) bool {
	return func(sv, v *Entry) bool {
		if r.told == nil {
			r.told = map[string]int{}
		}
		if r.told[v.Agent] < v.Step {
			r.told[v.Agent] = v.Step
		}
		if step, ok := r.told[sv.Agent]; ok && step >= sv.Step {
			return true
		}
		return !own[sv.Agent] && !sv.Time.After(v.Time)
	}
}

// Done is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// HoldUntilDone calls release (a run slot's) once the run has ended, when
// its caller started it (Start's started), or at once when it only joined
// a run another call started, which holds a slot of its own.
func (r *Run) HoldUntilDone(started bool, release func()) {
	if !started {
		release()
		return
	}
	go func() {
		<-r.done
		release()
	}()
}

// Result is the run's result once Done is closed.
func (r *Run) Result() (*TeamResult, error) {
	<-r.done
	return r.res, r.err
}

// Cancel stops the run, cancelling its provider calls; the session is left
// cancelled and resumable.
func (r *Run) Cancel() { r.cancel(errCancelledByRequest) }

// CallerLeft stops the run because the call that waited for it went away
// (a client that disconnected): cancelled and resumable, as Cancel, but
// recorded as that, not as a request to cancel.
func (r *Run) CallerLeft() { r.cancel(errCallerLeft) }

// stopRun is a run's cancel: every cause ends the run's context, and every
// cause but the timeout, which leaves the run its final call to make, ends
// the late work too (Run.late), so a cancel or a shutdown during that call
// stops it rather than waiting up to a step timeout.
func stopRun(run, late context.CancelCauseFunc) context.CancelCauseFunc {
	return func(cause error) {
		run(cause)
		if !errors.Is(cause, errTimeout) {
			late(cause)
		}
	}
}

// tell publishes a run's progress to the subscriptions that hear it.
func (svc *Service) tell(p Progress) {
	if svc.hears(p.SessionID, ObservedProgress) {
		svc.publish(Observation{SessionID: p.SessionID, Kind: ObservedProgress, Progress: &p})
	}
}

var (
	errCancelled  = errors.New("cancelled")
	errFinalizing = errors.New("finalizing")
	// errCancelledByRequest is Cancel's, so the session records why
	// (TeamResult.CancelReason) as the run stops, not only once Cancel
	// writes its own entry after it.
	errCancelledByRequest = fmt.Errorf("%w by request", errCancelled)
	errCallerLeft         = fmt.Errorf("%w: its caller stopped waiting for it", errCancelled)
)

// pollInterval is how often a loop looks again while only another process's
// steps are in flight (those finish without telling us).
const pollInterval = 50 * time.Millisecond

// Start runs a session's loop in the background and returns its handle; the
// run belongs to the service until it ends or is cancelled. A session that
// already runs here returns the existing handle; one that runs in another
// process is refused with ErrSessionRunning. started says whether this call
// started the run, decided under the runs' lock: of many concurrent
// calls exactly one starts it and the others join it, so only the starter
// may treat the run as its own (cancel it when its caller goes away). To
// hear the run's progress, subscribe to the session before Start: with fast
// models a run may be over before a Subscribe after it.
func (svc *Service) Start(ctx context.Context, id string) (r *Run, started bool, err error) {
	return svc.start(ctx, id, -1)
}

// start is Start for a run asked for over cancels cancelled entries, the
// count its caller saw when it decided to start it; a negative count is
// taken here, as Start's caller decides at the call.
func (svc *Service) start(ctx context.Context, id string, cancels int) (r *Run, started bool, err error) {
	defer svc.sessions.starting(id)()
	if r, ok := svc.runs.get(id); ok {
		return r, false, nil
	}
	if svc.runs.shut() {
		return nil, false, ErrShuttingDown
	}
	// Counted before anything else: a cancel recorded while this run starts
	// up (claims, tidies, starts MCP servers) came after it was asked for,
	// and stops it rather than being lifted by it.
	asked, askedErr := cancels, error(nil)
	fresh := false // created here for this run: it never ran
	switch {
	case cancels >= 0:
	case svc.fresh.DeleteIf(id, func(struct{}) bool { return true }):
		// Created by this service for this run: every cancel came after
		// the run was asked for, even one landing before this line.
		asked, fresh = 0, true
		defer func() {
			// Not started: still the session created for it (NotStarted),
			// unless another process runs it, whose cancels count.
			if err != nil && !errors.Is(err, ErrSessionRunning) {
				svc.fresh.Put(id, struct{}{})
			}
		}()
	default:
		asked, askedErr = svc.cancelsNow(ctx, id)
	}
	// A start of a session not created here for this run may take up one
	// whose creator stopped before its run began: the setup says whether
	// the session was created for a run (tookUpUnclaimed), read before the
	// claim so that no failure comes between the claim and that decision.
	var setup *Session
	if !fresh {
		if setup, err = svc.sessions.get(ctx, id); err != nil {
			return nil, false, err
		}
	}

	claim, dead, err := svc.leases.claimRun(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if dead != nil {
		svc.event(ctx, id, resumedFrom(dead, "resumed"))
		svc.resumedLog(id, dead, "resumed")
	}
	if setup != nil {
		svc.tookUpUnclaimed(ctx, setup, claim, "resumed")
	}
	// A start that fails from here on lets the claim go. One that took
	// over an unreleased lease (a dead run's, or this service's own run
	// that left it to expire), or took up a session created for a run
	// that none had claimed, leaves its lease to expire instead:
	// released, the session would read running with nothing running it,
	// where it read interrupted, for a replica to take up again.
	unlockRun := claim.release
	if claim.interrupted {
		unlockRun = claim.leave
	}
	if err := svc.OpenForWriting(ctx, id); err != nil {
		unlockRun()
		return nil, false, err
	}
	if askedErr != nil { // a damaged file, which opening has just put right
		if asked, err = svc.cancelsNow(ctx, id); err != nil {
			unlockRun()
			return nil, false, err
		}
	}
	// Read the setup under the run lock, which attaching criteria also
	// takes: the setup cannot change until the run ends, so the run builds
	// its prompts once here and the service keeps it from now on (see
	// forgetUnstepped for a run that ends before any step).
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		unlockRun()
		return nil, false, err
	}
	for _, a := range s.Agents {
		if a.IsHost() {
			unlockRun()
			return nil, false, fmt.Errorf("%w: %s is a host agent", ErrHostInRunTeam, a.ID)
		}
	}
	if err := svc.servers.start(ctx, s, svc.agentMCPPlaces); err != nil {
		unlockRun()
		return nil, false, err
	}
	if s.prompts == nil && !s.Foreign {
		s.prompts = newPromptSet(s) // read from the store: ours alone
	}
	// Before runs.mu, which is never held across a store call: a slow
	// database would stall every run of the process.
	asking, leftQuestions := svc.sharedAsking(ctx, s, !fresh, claim.version)
	svc.runs.mu.Lock()
	if svc.runs.closed { // Shutdown took its list of runs meanwhile
		svc.runs.mu.Unlock()
		svc.servers.close(id)
		unlockRun()
		return nil, false, ErrShuttingDown
	}
	if r, ok := svc.runs.loops[id]; ok { // lost a race with another Start here
		svc.runs.mu.Unlock()
		unlockRun()
		return r, false, nil
	}
	if s.prompts != nil {
		svc.sessions.setups.Put(id, s)
	}
	base := withRunLease(context.WithoutCancel(asking), claim)
	rctx, cancelRun := context.WithCancelCause(base)
	late, cancelLate := context.WithCancelCause(base)
	cancel := stopRun(cancelRun, cancelLate)
	r = &Run{ID: id, cancel: cancel, late: late, done: make(chan struct{}), cancels: asked, claim: claim, leftQuestions: leftQuestions, created: fresh && claim.first && dead == nil}
	svc.runs.loops[id] = r
	svc.runs.going.Add(1)
	svc.runs.mu.Unlock()
	if dead != nil {
		svc.counts.takenOver.Add(1) // once the run is on: a start that failed took nothing over
	}

	go claim.fence(r)
	// A cancelled session this run resumes reads running by the time
	// Start returns: a caller that does not wait for the run shows the
	// session's status at once, which must not still read cancelled,
	// naming as the way to resume it the very call that just did. Past the
	// point of no return (the run is registered, and its loop starts
	// whatever happens here), so a session resumed is one a run is on; a
	// resume that fails (the store unreachable) is the loop's to try again,
	// once it has waited the outage out as it does for any of its writes.
	r.resumeErr = svc.resume(base, id, "run again", asked)
	go func() {
		defer svc.runs.going.Done()
		defer close(r.done)
		defer func() {
			// A Start of this session waits while the run is gone from
			// runs but its run lock is still held: it would be refused as
			// running "in this server" by a run that is over.
			started := svc.sessions.starting(id)
			svc.runs.remove(id)
			svc.sessions.derived.Delete(id)
			svc.sessions.forgetUnstepped(id, s, r.res)
			svc.servers.close(id)
			// Not when the session goes to another run: a hand-over's,
			// or the one that claimed a lease this run lost.
			if asked := svc.askedHere(id); (r.leftQuestions || asked) && !r.handOver && !claim.isLost() {
				svc.closeLeftQuestions(id, claim.version)
			}
			switch {
			case r.handOver:
				claim.handOver()
			case r.leaveLease:
				claim.leave()
			default:
				claim.release()
			}
			started()
			cancel(nil)
		}()
		r.res, r.err = svc.loop(rctx, r, s)
		svc.counts.runEnded(claim)
	}()
	return r, true, nil
}

// Cancels is how many of its session's cancels the run lifts: those
// recorded when it was asked for (a later one stops it). A run followed
// elsewhere (Follow, and StartOrFollow's takeovers of it) says how many the
// session had as it was followed.
func (r *Run) Cancels() int { return r.cancels }

// Run runs a session to its end and returns the team result. Cancelling ctx
// cancels the run and leaves the session cancelled and resumable; a run
// Run only joined (another caller of this service started it) goes on, and
// Run returns the context's error. progress,
// if set, is told the run's progress — every message, in order, all of them
// before Run returns — on the caller's goroutine: it is a subscription to
// the session's ObservedProgress, read here, so a slow progress never holds
// up the run.
func (svc *Service) Run(ctx context.Context, id string, progress func(Progress)) (*TeamResult, error) {
	var sub *Subscription
	if progress != nil {
		// Not ended by ctx: what the run tells while it is being cancelled
		// ("session cancelled") is still progress.
		var err error
		if sub, err = svc.Subscribe(context.WithoutCancel(ctx), Filter{Sessions: []string{id}, Kinds: []ObservationKind{ObservedProgress}}); err != nil {
			return nil, err
		}
		defer sub.Close()
	}
	r, started, err := svc.Start(ctx, id)
	if err != nil {
		if !errors.Is(err, ErrSessionRunning) {
			// A session created for this run (massgen-mcp run, the live
			// view, checkpoint) whose start failed reads cancelled, saying
			// why, as StartOrFollow's callers' do: left alone it read
			// running for ever, with nothing running it and no resumer
			// taking it up (its claim was taken back).
			err = svc.StartRefused(ctx, id, err)
		}
		return nil, err
	}
	tell := func() {
		for _, o := range sub.Take() {
			progress(*o.Progress)
		}
	}
	cancelled := ctx.Done()
	for {
		select {
		case <-sub.Ready():
			tell()
		case <-cancelled:
			if !started {
				// Joined, not started: the run is its starter's, who
				// may still wait for it. Only this wait ends.
				return nil, fmt.Errorf("stopped waiting for session %s, which another caller started; it goes on running: %w", id, context.Cause(ctx))
			}
			// Its caller is a person at a terminal (the CLI, the live
			// view): a Ctrl-C is a request to cancel. A deadline is not.
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				r.CallerLeft()
			} else {
				r.Cancel()
			}
			cancelled = nil
		case <-r.Done():
			tell() // published before the run ended: all of it is queued
			return r.Result()
		}
	}
}

// Running returns the local run of a session, if any.
func (svc *Service) Running(id string) (*Run, bool) {
	return svc.runs.get(id)
}

// errHandingOver stops a run whose service is stopping and hands it over
// (Options.HandOver).
var errHandingOver = errors.New("this server is stopping and hands the run over: a server resuming interrupted runs, another replica or this one started again, continues it at once; wait for the session there")

// ErrShuttingDown refuses a run asked of a service that is stopping.
var ErrShuttingDown = errors.New("the server is shutting down; the session is resumable: run it again once the server is back, or through another replica")

// Shutdown stops the service for good (the server is stopping): no run
// starts from now on, even one whose request came in before, and every
// local run is cancelled (CancelAll), or, with Options.HandOver, handed
// over. It waits for them to record their ends, and for failed run claims
// still being taken back (claimundo.go), until ctx ends, and then returns
// ctx's error, the runs left to go on as far as they get and the undos
// stopped.
func (svc *Service) Shutdown(ctx context.Context) error {
	svc.runs.mu.Lock()
	svc.runs.closed = true
	svc.runs.mu.Unlock()
	cause := errCancelled
	if svc.opts.HandOver {
		cause = errHandingOver
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.stopAll(cause)
		// A run that ended just before, gone from runs, may still be
		// letting its lease go: no write of this service's follows
		// Shutdown (the caller closes the store next).
		svc.runs.going.Wait()
	}()
	select {
	case <-done:
		// Failed run claims still being taken back finish too, before
		// the caller closes the store (claimundo.go).
		return svc.leases.undos.finish(ctx)
	case <-ctx.Done():
		_ = svc.leases.undos.finish(ctx) // ctx has ended: it stops them
		return ctx.Err()
	}
}

// CancelAll cancels every local run (server shutdown, stdin closed), waits
// for them to stop and closes every MCP server left; their sessions stay
// resumable.
func (svc *Service) CancelAll() { svc.stopAll(errCancelled) }

// stopAll stops every local run for cause, waits for them and closes every
// MCP server left.
func (svc *Service) stopAll(cause error) {
	runs := svc.runs.all()
	if len(runs) > 0 && errors.Is(cause, errHandingOver) {
		svc.log.Warn().Int("runs", len(runs)).Msg("stopping: handing this server's runs over; a server resuming interrupted runs continues them at once")
	}
	for _, r := range runs {
		r.cancel(cause)
	}
	for _, r := range runs {
		<-r.Done()
	}
	// What is left are step-driven sessions' servers: no run closes them.
	svc.servers.closeAll()
}

type landed struct {
	agent string
	res   *StepResult
	err   error
}

// loop is the asynchronous run: launch every agent due to act (at most
// Parallel at once), and whenever a step lands, decide and launch again.
func (svc *Service) loop(ctx context.Context, r *Run, s *Session) (*TeamResult, error) {
	// Resuming is bookkeeping: a run cancelled this early must still get as
	// far as recording its cancellation (stop, below), not end with the
	// session left running. A cancel recorded since the run was asked for
	// stays: the loop below finds the session cancelled and stops.
	// down is the store's outage in progress: a step or a read that found
	// the store unreachable pauses the loop and is tried again (outage.go).
	// Start made the first attempt (r.resumeErr): the loop tries again
	// only after one that failed.
	var down outage
	// ended is the error the run stops on, once the end of its outage is
	// recorded if the store answered again (overOn): a run that waited and
	// then stopped (its lease claimed elsewhere meanwhile, a refusal) says
	// so, not left with an outage that never ended.
	ended := func(err error) error {
		svc.overOn(ctx, s.ID, "the run", &down, err)
		return err
	}
	for err := r.resumeErr; err != nil; err = svc.resume(context.WithoutCancel(ctx), s.ID, "run again", r.cancels) {
		// Stopped like any run: a cancel recorded, an error said, or, for
		// an outage that outlasts the lease, left to read interrupted.
		if again, err := svc.waitOut(ctx, r, s, &down, err); !again {
			return svc.stop(context.WithoutCancel(ctx), r, s, nil, nil, ended(err))
		}
	}
	// What steps whose holders stopped answering spent (a replica that
	// died mid-call, its agent not stepped since) is in the ledger before
	// the first launch counts what the budget can still pay for. A
	// session this service created for this run has none: asked, it cost
	// a round trip a session for nothing (its end still asks).
	if !r.created {
		svc.recordDeadSpendRunOut(ctx, s)
	}
	// The timeout binds the session's runs together: a run that took over
	// from one that died or was handed over has only what that one left.
	var ranBefore time.Duration
	if r.claim != nil {
		ranBefore = r.claim.ranBefore
	}
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, seconds(s.Rules.TimeoutSeconds)-ranBefore, errTimeout)
	defer cancelTimeout()
	results := make(chan landed, MaxAgents)
	own := map[string]bool{}
	// A first step's worst case depends on the setup alone: one estimate a
	// loop, made when a launch first needs it (affordable).
	worst := sync.OnceValue(func() stepWorst { return worstStep(s) })
	dctx := context.WithoutCancel(ctx)
	// Steps run under their own context, so that the end of the session can
	// cancel the ones still calling a model without cancelling the final
	// call.
	stepCtx, cancelSteps := context.WithCancelCause(ctx)
	defer cancelSteps(nil)
	// Steps run on the run's own workers rather than a goroutine each: a new
	// goroutine starts with a small stack and copies it, growing, twice in
	// every step, where a worker's stack has grown once for good. Every
	// worker beyond the steps in flight has handed in its result, so it is
	// idle or about to be, and the send below waits for it at most a moment.
	jobs := make(chan string)
	defer close(jobs)
	workers := 0

	// Another process sharing the store (files, or a database's replicas)
	// may cancel or finalize the session: the store's watch tells the loop
	// within a second (not at its next landing, up to step_timeout away),
	// and the loop looks again. A store no other process reaches (the
	// memory store) needs no watch: Cancel here cancels this run directly.
	// A watch that cannot be set up (the store unreachable as the run
	// starts) or that ends is set up again, at most once a watchRetry,
	// and meanwhile the loop looks again each watchRetry even with steps
	// of its own in flight, so such a cancel still stops their calls
	// within about a second.
	watching := !processLocal(svc.store)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := runWatch{svc: svc, id: s.ID, ctx: wctx}
	if watching {
		w.again()
	}

	// fresh is the state the latest landing left: the loop launches from it
	// rather than reading the ledger a third time for the same step.
	var fresh *State
	// draft is the final call's outcome once made: an outage that keeps
	// its record from the store is waited out without paying for the
	// call again.
	draft := finalDraft{retry: true}
	for {
		var st *State
		var res *TeamResult
		if fresh != nil && fresh.Life.Status == StatusRunning {
			st, fresh = fresh, nil
		} else {
			var err error
			if _, st, res, err = svc.runResult(dctx, s, false); err != nil {
				if again, err := svc.waitOut(ctx, r, s, &down, err); !again {
					return svc.stop(dctx, r, s, own, results, ended(err))
				}
				continue
			}
			svc.over(dctx, s.ID, "the run", &down)
		}
		if st.Life.Status != StatusRunning {
			// Cancel the steps still calling their models (they write
			// nothing), wait for the others, and report the ones that
			// landed. After a forced end (a budget) a step whose model had
			// already replied may still land after the end is recorded; its
			// entry and cost are in the ledger, not in the recorded result.
			cancelSteps(errSessionEnded)
			if svc.drainSteps(dctx, r, s, own, results) > 0 {
				// What landed after the end is in the result (the landing
				// amended it): return that one, not the one read before.
				var err error
				if _, st, res, err = svc.runResult(dctx, s, true); err != nil {
					if again, err := svc.waitOut(ctx, r, s, &down, err); !again {
						return svc.stop(dctx, r, s, own, results, ended(err))
					}
					continue
				}
			}
		}
		switch st.Life.Status {
		case StatusFinished, StatusFailed:
			res = svc.finishCaughtUp(dctx, s, res)
			svc.tell(svc.progress(s, st, ProgressFinished, "", finishedMessage(res)))
			return res, nil
		case StatusDecided:
			svc.tell(svc.progress(s, st, ProgressDecided, "", fmt.Sprintf("%s %s wins; writing the final answer (%s)", Who(res.Winner.AgentID, res.Winner.Model), Bracket(res.Winner.Label), s.Rules.Final)))
			res, err := svc.writeFinalWhileSure(ctx, r.claim, s, "", &draft)
			if err != nil && ctx.Err() != nil {
				// Cancelled, timed out or shut down while the final call
				// was pending, or its finish waiting out an outage: the
				// session must not stay decided with nothing to write its
				// answer, nor the call's spend be lost.
				return svc.stopFinal(dctx, r, s, own, results, ended(context.Cause(ctx)), &draft)
			}
			if svc.storeDown(err) {
				if again, err := svc.waitOut(ctx, r, s, &down, err); !again {
					return svc.stopFinal(dctx, r, s, own, results, ended(err), &draft)
				}
				continue
			}
			if err != nil {
				// A refusal that stands: stopped like any error, which
				// leaves a decided session to read interrupted.
				svc.keepFinalSpend(dctx, s, &draft, nil)
				svc.finishUnwritten(dctx, r, s, err)
				return svc.stop(dctx, r, s, own, results, ended(err))
			}
			svc.over(dctx, s.ID, "the run", &down)
			return res, nil
		case StatusCancelled:
			svc.tell(svc.progress(s, st, ProgressCancelled, "", "session cancelled"))
			return res, nil
		}
		// Launch in a fixed order — fewest steps first, then team order —
		// counting only the steps whose results this loop has not yet taken,
		// so that with --parallel 1 the same seed gives the same ledger and no
		// agent is starved by a faster one. (A semaphore released by the step
		// goroutines was not enough: a zero-latency step could finish between
		// two launches of one pass, and the pass then launched the next agent
		// from a state that did not have that step yet.)
		//
		// First the run's claim is confirmed, as after a pause of the loop's
		// own (waitOut): a step that waited out an outage inside it (its
		// landing, throughOutage) comes back as a plain landing, the loop
		// never paused, and the run's lease may have run out meanwhile and
		// another replica claimed the run; the steps launched from it would
		// be fenced by their own step leases, not the run's, and land and
		// be paid for. Free while the lease surely lasts (runClaim.holds):
		// a step that met no outage costs no round trip.
		if r.claim != nil {
			if err := r.claim.confirm(ctx); err != nil {
				if again, err := svc.waitOut(ctx, r, s, &down, err); !again {
					return svc.stop(dctx, r, s, own, results, ended(err))
				}
				continue
			}
		}
		unaffordable := false
		// What a call of the session in flight here (a criteria call)
		// holds is counted as spent, beside the ledger, not as a step's
		// spend so far: its reservation is a worst case no step's mean
		// stands for. So are the holds of such calls in other processes
		// (a store that shares them): read with the ledger this pass
		// launches from, or a later one (sessions.heldRead), at no round
		// trip of the launch's own.
		here := svc.runs.holding(s.ID)
		live := svc.runs.spent(s.ID)
		live = spent{live.cost - here.cost, live.tokens - here.tokens}
		reserved := here.plus(svc.runs.heldElsewhere(s.ID, svc.sessions.heldRead(s.ID)))
		held := svc.heldSpend(dctx, s.ID).plus(reserved)
		for _, id := range launchOrder(st) {
			if own[id] || len(own) >= svc.opts.Parallel {
				continue
			}
			if !affordable(s, st, len(own), live, held, worst) {
				unaffordable = true
				break
			}
			if svc.hears(s.ID, ObservedProgress) {
				svc.tell(svc.progress(s, st, ProgressStepStarted, id, id+" is working"))
			}
			if workers == len(own) {
				workers++
				go svc.stepWorker(stepCtx, s, id, jobs, results)
			} else {
				jobs <- id
			}
			own[id] = true
		}
		if unaffordable && len(own) == 0 && reserved == (spent{}) {
			// Nothing in flight and the next step would overrun the budget:
			// the budget ends the session now. (While a call holds room,
			// here or in another process, the loop waits for it: most of
			// a reservation comes back, and one whose holder died
			// expires.)
			if _, err := svc.settle(dctx, s.ID, StopBudget, ""); err != nil {
				if again, err := svc.waitOut(ctx, r, s, &down, err); !again {
					return svc.stop(dctx, r, s, own, results, ended(err))
				}
			}
			continue
		}
		var tick <-chan time.Time
		if watching && w.changes == nil && w.again() {
			// A change between this pass's read and the new watch would
			// be heard by neither: look once more.
			tick = time.After(0)
		}
		switch {
		case tick != nil:
		case len(own) == 0:
			tick = time.After(pollInterval)
		case watching && w.changes == nil:
			tick = time.After(watchRetry)
		}
	wait:
		for {
			select {
			case lr := <-results:
				delete(own, lr.agent)
				if svc.storeDown(lr.err) && ctx.Err() == nil {
					// The step wrote nothing (or its landing is unknown and
					// the ledger says): pause, then launch from the ledger.
					if again, err := svc.waitOut(ctx, r, s, &down, lr.err); !again {
						return svc.stop(dctx, r, s, own, results, ended(err))
					}
					break wait
				}
				if lr.err != nil && !errors.Is(lr.err, ErrAgentBusy) && !errors.Is(lr.err, ErrNotNext) {
					if ctx.Err() != nil {
						return svc.stop(dctx, r, s, own, results, ended(context.Cause(ctx)))
					}
					if !errors.Is(lr.err, ErrSessionFinished) {
						return svc.stop(dctx, r, s, own, results, ended(lr.err))
					}
				}
				if lr.res != nil {
					svc.over(dctx, s.ID, "the run", &down)
					newest := r.landed(lr.res.state)
					if svc.hears(s.ID, ObservedProgress) {
						svc.tell(svc.stepProgress(dctx, s, lr.res, newest, r.counted(own)))
					}
					// Results can reach the loop out of their landings'
					// order: one landed before the state this pass launched
					// from carries an older state, missing a step that has
					// landed (and is no longer in own), and launching from
					// it would count that step nowhere, in the budget or in
					// the order. Then the ledger is read again.
					if lr.res.state.Steps > st.Steps {
						fresh = lr.res.state
					}
				}
				break wait
			case c, ok := <-w.changes:
				if !ok {
					w.changes = nil
					break wait // set up again, and looked again meanwhile
				} else if c.Session {
					break wait // a cancel, a finish, a re-vote: look again
				}
				// Steps land through results (ours) or are polled (others').
			case <-ctx.Done():
				return svc.stop(dctx, r, s, own, results, ended(context.Cause(ctx)))
			case <-tick:
				break wait
			}
		}
	}
}

// stepWorker runs a loop's steps — first's, then one agent id at a time
// from jobs — until the loop ends.
func (svc *Service) stepWorker(ctx context.Context, s *Session, first string, jobs <-chan string, results chan<- landed) {
	for id, ok := first, true; ok; id, ok = <-jobs {
		res, err := svc.serverStep(ctx, s, id, false) // the loop reads the state, not the tally
		results <- landed{agent: id, res: res, err: err}
	}
}

// drainSteps waits for the run's own steps to return, reports those that
// landed and says how many did.
func (svc *Service) drainSteps(ctx context.Context, r *Run, s *Session, own map[string]bool, results chan landed) int {
	n := 0
	for len(own) > 0 {
		lr := <-results
		delete(own, lr.agent)
		if lr.res != nil {
			n++
			newest := r.landed(lr.res.state)
			if svc.hears(s.ID, ObservedProgress) {
				svc.tell(svc.stepProgress(ctx, s, lr.res, newest, r.counted(own)))
			}
		}
	}
	return n
}

var (
	errTimeout      = errors.New("run timeout")
	errSessionEnded = errors.New("the session has ended")
	// errSessionTimeout stops a step outside a run at its session's
	// deadline (sessionDeadline): its run's errTimeout, for Step.
	errSessionTimeout = errors.New("the session reached its timeout")
)

// launchOrder lists the agents due to act, fewest steps first, then in team
// order.
func launchOrder(st *State) []string {
	if len(st.Next) == 0 {
		return nil // most landings (a barrier, votes standing): nothing to sort
	}
	due := make([]*AgentState, 0, len(st.Next))
	for _, a := range st.Agents {
		if a.Next {
			due = append(due, a)
		}
	}
	slices.SortStableFunc(due, func(a, b *AgentState) int { return a.Steps - b.Steps })
	ids := make([]string, len(due))
	for i, a := range due {
		ids[i] = a.ID
	}
	return ids
}

// stop ends a loop early: it waits for its own steps to return (a cancelled
// step writes nothing), then records why — timeout finishes the session,
// cancellation leaves it cancelled.
func (svc *Service) stop(ctx context.Context, r *Run, s *Session, own map[string]bool, results chan landed, cause error) (*TeamResult, error) {
	if errors.Is(cause, errTimeout) {
		ctx = withWaiting(ctx, s, own) // the timeout's note names them (agreement.go)
	}
	r.cancel(cause)
	for len(own) > 0 {
		lr := <-results
		delete(own, lr.agent)
	}
	switch {
	case errors.Is(cause, errTimeout):
		var set settled
		if err := svc.whileDown(ctx, r, s, func() (err error) {
			set, err = svc.settle(ctx, s.ID, StopTimeout, "")
			return err
		}); err != nil {
			return nil, err
		}
		st, res := set.st, set.res
		if st.Life.Status == StatusDecided {
			// Decided by the timeout: the final call is made, bounded by
			// the step timeout (finalCall), and stopped by a cancel or a
			// shutdown meanwhile (Run.late), which finishes the session
			// as a stop during any final call does.
			late := r.late
			if late == nil {
				late = ctx
			}
			draft := finalDraft{retry: true}
			err := svc.whileDown(ctx, r, s, func() (err error) {
				res, err = svc.writeFinalWhileSure(late, r.claim, s, "", &draft)
				return err
			})
			if err != nil && late.Err() != nil {
				return svc.stopFinal(ctx, r, s, own, results, context.Cause(late), &draft)
			}
			svc.keepFinalSpend(ctx, s, &draft, nil) // a finish given up
			if err != nil {
				svc.finishUnwritten(ctx, r, s, err)
			}
			return res, err
		}
		if st.Life.Status == StatusCancelled {
			// A cancel got in before the timeout's end was written (the
			// session lock passed to its recorder: sinceread.go).
			svc.tellCancelled(s.ID)
			return res, nil
		}
		svc.tell(svc.progress(s, st, ProgressFinished, "", finishedMessage(res)))
		return res, nil
	case errors.Is(cause, errHandingOver):
		// Nothing is written: the lease is made to expire, and the session
		// reads interrupted, for a server resuming those to take up.
		r.handOver = true
		return nil, cause
	case errors.Is(cause, errFinalizing):
		// finalize_team took over: the run ends here without a verdict of its
		// own; Finalize returns the result. Its lease is left, not released:
		// Finalize takes it back (claimRun), and a Finalize that fails before
		// it does (an outage) leaves a session nothing runs, which must read
		// interrupted once the lease expires, not running.
		r.leaveLease = true
		s2, l, st, err := svc.sessions.load(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		return svc.snapshot(s2, l, st), nil
	case errors.Is(cause, errCancelled), errors.Is(cause, context.Canceled):
		var res *TeamResult
		err := svc.whileDown(ctx, r, s, func() (err error) {
			res, err = svc.markCancelled(ctx, s.ID, runCancelReason(cause), false)
			return err
		})
		if err == nil && res.Status == StatusDecided {
			// Decided before the cancel, which a decided session refuses
			// (Cancel): its answer is written now, as the winner's.
			return svc.finishDecided(ctx, r, s, FinalWinner, winnerAsIs("the run was stopped (cancelled or shut down) while the final answer was pending"))
		}
		if err == nil {
			svc.tellCancelled(s.ID)
		}
		return res, err
	}
	svc.stoppedOnError(ctx, r, s, cause)
	return nil, cause
}

// tellCancelled tells a run's callers that it stopped with its session
// cancelled.
func (svc *Service) tellCancelled(id string) {
	svc.tell(Progress{SessionID: id, Kind: ProgressCancelled, Message: "session cancelled; resume it to continue", Time: svc.now()})
}

// stopFinal ends a run stopped while its decided session's final call was
// pending, or its finish waiting out an outage: left as it was, the session
// would read decided, waiting for an answer nothing writes, and no replica
// would take it up (it is not interrupted: the lease is released). A
// cancel or a shutdown, which a decided session cannot take (Cancel
// refuses it), and the run's timeout finish it: with the final call's
// answer if it was made (d, paid for), else with the winner's, saying why.
// Any other stop (finalize_team, a lost lease, a hand-over) is stop's, the
// call's spend recorded first.
func (svc *Service) stopFinal(ctx context.Context, r *Run, s *Session, own map[string]bool, results chan landed, cause error, d *finalDraft) (*TeamResult, error) {
	if !errors.Is(cause, errTimeout) && !errors.Is(cause, errCancelled) && !errors.Is(cause, context.Canceled) {
		svc.keepFinalSpend(ctx, s, d, nil)
		return svc.stop(ctx, r, s, own, results, cause)
	}
	r.cancel(cause)
	for len(own) > 0 {
		lr := <-results
		delete(own, lr.agent)
	}
	if d.made {
		return svc.finishDecided(ctx, r, s, "", d)
	}
	why := "the run was stopped (cancelled or shut down) while the final call was pending"
	if errors.Is(cause, errTimeout) {
		why = "the session's timeout ended it while the final call was pending"
	}
	return svc.finishDecided(ctx, r, s, FinalWinner, winnerAsIs(why))
}

// finishDecided finishes a decided session with d (final as writeFinalFrom
// takes it), waiting out an outage for as long as the run's lease lasts;
// d's spend is recorded if the finish is not. A finish refused, by an
// outage or by an error that stands (a full disk, a statement timeout),
// leaves the run's lease to expire rather than releasing it, as
// stoppedOnError and the loop's own refused finish do: the session reads
// interrupted, and a run taken up again (here or on another replica)
// writes its answer. Released, it read decided for ever with nothing to
// write its answer, since a released lease is no dead run's to take up. A
// refusal that stands counts as a failed resume (finishRefused), so
// replicas taking it up back off rather than pay for its final call at
// every look.
func (svc *Service) finishDecided(ctx context.Context, r *Run, s *Session, final FinalStrategy, d *finalDraft) (*TeamResult, error) {
	d.retry = true
	var res *TeamResult
	err := svc.whileDown(ctx, r, s, func() (err error) {
		res, err = svc.writeFinalFrom(ctx, s, final, d)
		return err
	})
	svc.keepFinalSpend(ctx, s, d, nil) // a finish given up
	if err != nil {
		svc.finishUnwritten(ctx, r, s, err)
		return res, err
	}
	svc.tell(Progress{SessionID: s.ID, Kind: ProgressFinished, Message: finishedMessage(res), Time: svc.now()})
	return res, err
}

// finishUnwritten is every way a run ends with its decided session's
// finish refused by err: the lease is left to expire (finishDecided says
// why), and a refusal that stands, neither an outage nor a lost lease,
// counts as a failed resume (finishRefused).
func (svc *Service) finishUnwritten(ctx context.Context, r *Run, s *Session, err error) {
	r.leaveLease = true
	if !svc.storeDown(err) && !errors.Is(err, ErrLeaseLost) {
		svc.finishRefused(ctx, s.ID)
	}
}

// whileDown runs write, a stopped run's record of why it stopped (its
// cancel, its timeout's end, the lease's read before an error's cancel),
// waiting out the store's outage for as long as the run's lease surely
// lasts (runClaim.holds): its heartbeat goes on until the run ends, so the
// session is the run's meanwhile, and a try that would come after the lease
// could have run out, or after it was lost, is not made, since another
// replica may have claimed the session by then and a stale record would
// stop its run. It returns write's last error. One the outage still
// explains means the record was never taken: the run leaves its lease to
// expire (Run.leaveLease), so the session reads interrupted rather than
// running with nothing running it. Any other error releases it as before:
// a refusal that would stand (a full disk) must not make the session
// interrupted, for a replica resuming those to take up again and again.
func (svc *Service) whileDown(ctx context.Context, r *Run, s *Session, write func() error) error {
	var down outage
	until := time.Now().Add(svc.leases.ttl) // a run made by a test holds no claim
	for {
		var lost bool
		if r.claim != nil {
			until, lost = r.claim.holds()
		}
		if lost || time.Now().After(until) {
			// Lost, or it may have run out while the store was down and
			// been claimed elsewhere: the session is not surely the run's.
			r.leaveLease = true
			return fmt.Errorf("the run's record of why it stopped was not written, its lease lost or run out while the store was unreachable: %w", ErrLeaseLost)
		}
		err := write()
		if err == nil || !svc.storeDown(err) {
			svc.overOn(ctx, s.ID, "the run's end", &down, err)
			return err
		}
		if r.claim != nil {
			until, lost = r.claim.holds()
		}
		if lost || time.Now().Add(outageWait(down.tries)).After(until) {
			r.leaveLease = true
			return err
		}
		pctx, stop := r.whileHeld(ctx)
		perr := svc.pause(pctx, s.ID, "the run's end", &down, err)
		stop()
		if perr != nil {
			r.leaveLease = true
			return err
		}
	}
}

// whileHeld is ctx ended when the run's lease is lost too, for a wait that
// must not outlast it, and the function that ends it once waited.
func (r *Run) whileHeld(ctx context.Context) (context.Context, func()) {
	if r.claim == nil {
		return ctx, func() {}
	}
	lctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-r.claim.lost:
			cancel(ErrLeaseLost)
		case <-lctx.Done():
		}
	}()
	return lctx, func() { cancel(nil) }
}

// stoppedOnError leaves a session whose run stopped on an error saying so:
// cancelled, with the error as the reason, and resumable. Left as it was,
// it read "running" for ever: its run lease is released when the run ends,
// so it never reads interrupted, and nothing runs it. Not interrupted
// either, which a replica resuming interrupted runs would take up again and
// again at the user's expense while the error stands. A run fenced by a
// lost lease writes nothing: the session is another process's now.
// Both its writes wait out an outage (whileDown), which may leave the
// run's lease to expire.
func (svc *Service) stoppedOnError(ctx context.Context, r *Run, s *Session, cause error) {
	if cause == nil || errors.Is(cause, ErrLeaseLost) {
		return
	}
	id := s.ID
	if ls, ok := svc.store.(LeaseStore); ok {
		// The lease lost to another claim at the moment another error
		// stopped the loop: the session is that process's now.
		var l *RunLease
		err := svc.whileDown(ctx, r, s, func() (err error) {
			l, err = ls.ReadRun(ctx, id)
			return err
		})
		if err != nil {
			svc.log.Warn().Err(err).Str("session", id).AnErr("run_error", cause).
				Msg("the run stopped on an error and its lease could not be read to tell whose the session is; it is not marked cancelled")
			return
		}
		if l != nil && l.ID != svc.leases.owner {
			return
		}
	}
	why := "the run stopped on an error: " + Reason(cause.Error(), ReasonRunes)
	var res *TeamResult
	if err := svc.whileDown(ctx, r, s, func() (err error) {
		res, err = svc.markCancelled(ctx, id, why, false)
		return err
	}); err != nil {
		svc.log.Warn().Err(err).Str("session", id).AnErr("run_error", cause).
			Msg("the run stopped on an error and could not mark its session cancelled")
		return
	}
	if res != nil && res.Status == StatusDecided {
		// A decided session is not cancelled: it waits for its final
		// answer. Its lease is left to expire, so it reads interrupted and
		// a run taken up again (here or on another replica) writes it.
		r.leaveLease = true
	}
}

// markCancelled records a cancellation unless the session has ended (or,
// without again, is cancelled already).
func (svc *Service) markCancelled(ctx context.Context, id, why string, again bool) (*TeamResult, error) {
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, l, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if st.Life.Status == StatusRunning || (again && st.Life.Status == StatusCancelled) {
		svc.recordDeadSpendLocked(ctx, s, l) // in the cancelled result (deadspend.go)
		if _, err := svc.appendSession(ctx, id, SessionEntry{Kind: SessionCancelled, Time: svc.now(), Reason: why}); err != nil {
			return nil, err
		}
		svc.event(ctx, id, Event{Type: "cancelled", Message: why})
		if l, err = svc.sessions.ledger(ctx, id); err != nil {
			return nil, err
		}
		st = svc.sessions.derive(s, l, nil)
	}
	res := svc.snapshot(s, l, st)
	svc.writeStatus(ctx, s, st, res)
	return res, nil
}

// Cancel stops a session: a local run is cancelled (its provider calls too);
// otherwise the session is marked cancelled so any loop elsewhere stops at its
// next decision, and no step that began before lands (cancelfence.go). The
// session stays resumable. A session that ended first, or was decided (its
// final answer written or being written), is refused with a FinishedError:
// a cancelled result is returned only when the session is cancelled.
func (svc *Service) Cancel(ctx context.Context, id string) (*TeamResult, error) {
	if r, ok := svc.Running(id); ok {
		r.Cancel()
		if _, err := r.Result(); svc.storeDown(err) {
			// The run stopped, its calls with it, but the store never took
			// the cancel (whileDown): the session reads interrupted once
			// the lease runs out, which a server resuming those takes up.
			return nil, fmt.Errorf("the run of session %q stopped, but its cancel could not be recorded (%w); it will read interrupted, and a server run with --resume-interrupted may take it up again: cancel it again once the store answers", id, err)
		}
	}
	set, err := svc.settle(ctx, id, "", "")
	if err != nil {
		return nil, err
	}
	st, res := set.st, set.res
	switch st.Life.Status {
	case StatusFinished, StatusFailed, StatusDecided:
		return nil, fmt.Errorf("%w; nothing to cancel", finishedError(id, res))
	}
	// An already cancelled session is cancelled again, on the record: a run
	// asked for before this cancel may be starting up to resume it
	// somewhere, and lifts only the cancels it was asked over
	// (cancelfence.go).
	res, err = svc.markCancelled(ctx, id, reasonByRequest, true)
	svc.servers.close(id) // a step-driven session's servers: no run closes them
	if err == nil && res.Status != StatusCancelled {
		// The last step decided the session between the look above and the
		// session lock: the run got there first.
		return nil, fmt.Errorf("%w; nothing to cancel", finishedError(id, res))
	}
	return res, err
}

func finishedMessage(res *TeamResult) string {
	if res.Winner == nil {
		return fmt.Sprintf("session %s (%s): no answer", res.Status, Deref(res.StopReason))
	}
	return fmt.Sprintf("%s %s wins (%s, %s)", Who(res.Winner.AgentID, res.Winner.Model), Bracket(res.Winner.Label), Deref(res.HowChosen), Deref(res.StopReason))
}

// progress builds a progress message from a state.
func (svc *Service) progress(s *Session, st *State, kind ProgressKind, agent, msg string) Progress {
	t := CountStanding(s, st)
	return Progress{SessionID: s.ID, Kind: kind, Agent: agent, Message: msg, Steps: st.Steps, Standing: t.Voters, Live: t.Live, Time: svc.now()}
}

// stepProgress describes a landed step, e.g. "agent_b (gpt-5.4) voted for
// agent_a [agent1.2] — 1 of 3 votes for [agent1.2]" (names.go).
// A vote's count is taken from newest when that still holds the vote
// (votesFor).
func (svc *Service) stepProgress(ctx context.Context, s *Session, res *StepResult, newest *State, counted func(sv, v *Entry) bool) Progress {
	if res.Result == nil && res.Consensus.Tally == nil && res.state != nil {
		res.Consensus = consensusView(s, res.state) // a loop's step leaves it to whoever listens
	}
	standing, live := 0, 0
	for _, n := range res.Consensus.Tally {
		standing += n
	}
	live = len(s.Agents)
	if res.Result != nil {
		live = len(res.Result.Agents)
	}
	var msg string
	me := Who(res.AgentID, s.modelOf(res.AgentID))
	switch res.Action {
	case "new_answer":
		msg = fmt.Sprintf("%s answered %s", me, Bracket(res.Label))
	case "vote":
		target, n := "", 0
		if res.state != nil {
			target, n = votesFor(res.state, newest, res.AgentID, counted)
		}
		msg = fmt.Sprintf("%s voted for %s", me, strings.TrimSpace(target+" "+Bracket(res.TargetLabel)))
		if res.Stale {
			msg += " (stale)"
		} else if target != "" {
			msg += fmt.Sprintf(" — %d of %d votes for %s", n, live, Bracket(res.TargetLabel))
		}
	default:
		msg = fmt.Sprintf("%s failed (%s)", me, res.ErrorClass)
		if res.state != nil {
			if a := res.state.Agent(res.AgentID); a != nil && a.Dropped {
				msg += " and is dropped"
			}
		}
		// The class alone hides what to do ("Prompt is too long" and "Invalid
		// auth method selected" are both provider errors).
		if why := Reason(res.Message, ReasonRunes); why != "" {
			msg += ": " + why
		}
	}
	return Progress{SessionID: s.ID, Kind: kindOfAction(res.Action), Agent: res.AgentID, Message: msg, Standing: standing, Live: live, Time: svc.now()}
}

func kindOfAction(a string) ProgressKind {
	switch a {
	case "new_answer":
		return ProgressAnswer
	case "vote":
		return ProgressVote
	}
	return ProgressError
}

// affordable tells whether one more step may be launched under the session's
// budgets, with inFlight steps already out: the spend so far plus the
// expected cost of every step in flight and of this one must stay within
// each budget. The expected cost is the mean of the steps landed so far;
// before any has landed it is the worst case of a first step at list prices
// (estimate.go), so the first wave launches only what the budget can pay
// for in the worst case. Parallel launches overshoot a budget by at most
// what the steps in flight cost beyond that expectation. live is what the
// steps in flight have reported spending so far (a CLI agent's turns): no
// step is launched while the ledger and they are at a budget already, since
// it would spend a turn before hearing so. held is the session's spend
// this process holds that an outage kept from the ledger (spendspool.go),
// and what its calls in flight here hold (a criteria call's reservation,
// spendhold.go): spent, so counted beside the ledger's.
func affordable(s *Session, st *State, inFlight int, live, held spent, worstCase func() stepWorst) bool {
	r := s.Rules
	if !r.budgeted() {
		return true
	}
	l := ledgerSpent(st)
	paid := l.spent.plus(held)
	if (r.CostBudgetUSD != nil && paid.cost+live.cost >= *r.CostBudgetUSD) || (r.TokenBudget != nil && paid.tokens+live.tokens >= *r.TokenBudget) {
		return false
	}
	// Before a step has landed (with a cost), the worst case of a first
	// step stands in for the mean (worstCase: worked out once a loop, and
	// only when asked).
	out := float64(inFlight + 1)
	if r.CostBudgetUSD != nil {
		per, known := 0.0, l.costed > 0
		if known {
			per = l.cost / float64(l.costed)
		} else {
			per, known = worstCase().cost, worstCase().priced
		}
		if known && paid.cost+out*per > *r.CostBudgetUSD {
			return false
		}
	}
	if r.TokenBudget != nil {
		var per float64
		if l.steps > 0 {
			per = float64(l.tokens) / float64(l.steps)
		} else {
			per = float64(worstCase().tokens)
		}
		if float64(paid.tokens)+out*per > float64(*r.TokenBudget) {
			return false
		}
	}
	return true
}

// stepWorst is the largest worst case of one first step among the team's
// agents (estimate.go): what a launch counts on before any step has landed.
type stepWorst struct {
	cost   float64
	priced bool
	tokens int64
}

func worstStep(s *Session) stepWorst {
	var w stepWorst
	for _, a := range estimateSession(s).Agents {
		w.tokens = max(w.tokens, a.InputTokens+a.OutputTokens)
		if a.CostUSD != nil {
			w.cost, w.priced = max(w.cost, *a.CostUSD), true
		}
	}
	return w
}

// reasonByRequest is the reason Cancel records, and a run it stops.
const reasonByRequest = "cancelled by request"

// runCancelReason is the recorded reason of a run stopped by cause.
func runCancelReason(cause error) string {
	switch {
	case errors.Is(cause, errCancelledByRequest):
		return reasonByRequest
	case errors.Is(cause, errCallerLeft):
		return "cancelled: its caller stopped waiting for it"
	case errors.Is(cause, errCancelled):
		return "stopped with the process running it (resumable)"
	}
	return "run cancelled"
}
