package coordination

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// StepRequest asks for one step of one agent: a server step (no action, a
// server agent), a host's view (no action, a host agent), or a host's
// submitted action.
type StepRequest struct {
	SessionID string
	AgentID   string
	Action    string // "", new_answer, vote
	Content   string
	Target    string // agentN or agentN.k
	Reason    string
	SeenSteps map[string]int
	// After, for a model agent's step, names the agent's latest step when
	// the step was first asked for (a retry of a call that outlived its
	// wait, on any replica): the agent's first step landed after it is the
	// answer; one in flight is waited for; only with neither is a step
	// taken (stepjoin.go).
	After *int
	// Began, if set, is told the agent's latest step as a model agent's
	// step begins: what a retry names as After.
	Began func(after int)
}

// Step runs one step (docs/DESIGN.md, "Who drives").
func (svc *Service) Step(ctx context.Context, req StepRequest) (*StepResult, error) {
	if err := svc.openOnce(ctx, req.SessionID); err != nil {
		return nil, err
	}
	s, err := svc.sessions.get(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	ag, err := s.member(req.AgentID)
	if err != nil {
		return nil, err
	}
	host := ag.IsHost()
	// A session is driven one way at a time: while a run holds it, here or
	// on another replica, its agents step in that run, within its
	// parallelism, spend and timeout, and a step asked for beside it
	// would be a second driver. The run lease is read (a round trip on a
	// database) for a step-driven session too: run_team may drive one.
	if !host && svc.RunHeld(ctx, s.ID) {
		return nil, &RunningError{Session: s.ID, By: "its run, here or on another replica, in which its agents step"}
	}
	switch {
	case req.Action != "" && !host:
		return nil, fmt.Errorf("%w: %s is run by the server (%s)", ErrNotHost, ag.ID, providers.ShowSpec(ag.Model))
	case req.Action != "" && req.Action != providers.ToolNewAnswer && req.Action != providers.ToolVote:
		return nil, fmt.Errorf("%w: action %q must be new_answer or vote", ErrBadAction, req.Action)
	}
	if host && req.Action != "" {
		// A client's retry of a submission that landed gets the original
		// result, whatever the session has done since.
		if issued, ok := svc.hosts.replayable(ctx, s, req); ok {
			return svc.hosts.replay(ctx, s, req, issued)
		}
	}
	// Every call that touches a session checks its limits and decides it if
	// something is pending (a crash between a step's entry and its decision);
	// only then is the session lock worth taking. A cancelled session resumes
	// when stepped again; a host's view is a read and resumes nothing.
	l, st, res, err := svc.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if !host && req.After != nil {
		// A retry: the step it asked for, if it landed, whatever the
		// session has done since (it may have ended it).
		if e := firstEntryAfter(l, ag.ID, *req.After); e != nil {
			return svc.landedResult(ctx, s, *e)
		}
		if st.Life.Status == StatusCancelled {
			// The step it continues was cancelled before it landed: a
			// client polling for it must not resume the session.
			return nil, fmt.Errorf("%w: session %q was cancelled before %s's step landed; step it again without after_step to resume the session", ErrNotNext, s.ID, ag.ID)
		}
	}
	switch st.Life.Status {
	case StatusFinished, StatusFailed, StatusDecided:
		return nil, finishedError(s.ID, res)
	case StatusCancelled:
		if host && req.Action == "" {
			break
		}
		if err := svc.resume(ctx, s.ID, "stepped again", st.Life.Cancels); err != nil {
			return nil, err
		}
	}
	if host && req.Action == "" {
		return svc.hosts.view(ctx, s, ag.ID)
	}
	if host {
		return svc.hosts.submit(ctx, s, req)
	}
	// The session's end stops the step's model call too, wherever it is
	// decided (the session timer's timeout, a budget stop or a finalize
	// another landing or replica records), and so does the session's
	// deadline: a call that went on would be paid for after the session
	// stopped counting it (a run's steps are stopped by its loop).
	deadline, err := svc.stepDeadline(ctx, s, l, st.Life.Status == StatusCancelled)
	if err != nil {
		return nil, err
	}
	if s.Driver != DriverStep && !deadline.IsZero() && !svc.now().Before(deadline) {
		return nil, svc.endedBeforeStep(ctx, s, ag.ID)
	}
	ends, endCall := context.WithCancelCause(context.Background())
	defer endCall(nil)
	if !deadline.IsZero() {
		t := time.AfterFunc(deadline.Sub(svc.now()), func() {
			endCall(fmt.Errorf("session %q reached its timeout (%g s) while %s's model call ran; the step was not recorded: %w", s.ID, s.Rules.TimeoutSeconds, ag.ID, errSessionTimeout))
		})
		defer t.Stop()
	}
	sctx, done := svc.untilCancelled(ctx, s.ID, st.Life.Cancels, "this step's model call ran; the step was not recorded", func() {
		endCall(fmt.Errorf("session %q ended while %s's model call ran; the step was not recorded: %w", s.ID, ag.ID, errSessionEnded))
	})
	defer done()
	sctx = context.WithValue(sctx, sessionEndKey{}, ends)
	after := latestStep(st, ag.ID)
	if req.After != nil {
		after = *req.After
	}
	if req.Began != nil {
		req.Began(after) // what this call began from, if it waits on another's step
		if req.After == nil {
			// Told again under the step lock: another step of the agent
			// may have landed since this call's first look.
			sctx = context.WithValue(sctx, beganKey{}, req.Began)
		}
	}
	out, err := svc.serverStep(sctx, s, ag.ID, true)
	if errors.Is(err, ErrAgentBusy) && (req.After != nil || !svc.runs.steppingHere(s.ID, ag.ID)) {
		// In flight elsewhere, or (a retry) anywhere: its landing is the
		// answer.
		out, err = svc.joinLanding(sctx, s, ag.ID, after, st.Life.Cancels)
		return out, svc.endedMidStep(ctx, s, ag.ID, err)
	}
	err = svc.endedMidStep(ctx, s, ag.ID, err)
	if err != nil && req.After != nil {
		// A retry refused (not due, the session ended) because the step
		// it asks for landed since this call's first look: that step.
		if _, l, _, lerr := svc.sessions.load(ctx, s.ID); lerr == nil {
			if e := firstEntryAfter(l, ag.ID, after); e != nil {
				return svc.landedResult(ctx, s, *e)
			}
		}
	}
	return out, err
}

// beganKey carries StepRequest.Began to the step under its lock.
type beganKey struct{}

// untilCancelled is ctx ended (errCancelled, saying the session was
// cancelled while what) once a cancel past cancels lands on the session,
// wherever it was recorded: a step-driven session has no run loop to hear
// a cancel from another replica, and its model call would otherwise run to
// its end (paid for) to have only its landing refused by the cancel fence;
// a session's criteria call likewise. ended, if set, is called once when
// the session reads decided, finished or failed instead (a step's model
// call is stopped then: sessionEndKey). The session is read only when a
// session entry lands: a cancel that landed before the watch began is left
// to that fence, and an end to the step's own look at the ledger under its
// lock (due). done stops the watch and waits for its reader.
func (svc *Service) untilCancelled(ctx context.Context, id string, cancels int, what string, ended func()) (context.Context, func()) {
	sctx, cancel := context.WithCancelCause(ctx)
	changes, err := svc.store.Watch(sctx, id)
	if err != nil {
		return sctx, func() { cancel(nil) } // the landing's fence still refuses
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-sctx.Done():
				return
			case c, ok := <-changes:
				if !ok {
					return
				}
				if !c.Session {
					continue
				}
				l, _, err := svc.sessions.lend(sctx, id)
				if err != nil {
					continue
				}
				switch lc := lifecycle(l.Session); {
				case lc.Cancels > cancels:
					cancel(fmt.Errorf("session %q was %w while %s", id, errCancelled, what))
					return
				case ended != nil && lc.Status != StatusRunning && lc.Status != StatusCancelled:
					ended()
					ended = nil // told once; a cancel is still heard
				}
			}
		}
	}()
	return sctx, func() { cancel(nil); <-exited }
}

// sessionEndKey carries to a step-driven session's server step (Step) the
// context that ends when the session does, or when its deadline passes: it
// bounds the step's model call (boundBySession), not the landing of a reply
// the model gave before, which lands after the end as a run's late step
// does ("Forced ends and spend").
type sessionEndKey struct{}

// boundBySession is ctx ended too, with its cause, when the session's end
// carried in it (sessionEndKey) ends; ctx itself when it carries none (a
// run's step: its loop stops its steps). stop lets the bound go.
func boundBySession(ctx context.Context) (context.Context, func()) {
	ends, ok := ctx.Value(sessionEndKey{}).(context.Context)
	if !ok {
		return ctx, func() {}
	}
	bctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(ends, func() { cancel(context.Cause(ends)) })
	return bctx, func() { unhook(); cancel(nil) }
}

// sessionDeadline is when a session's timeout ends the steps taken outside
// a run (Step), at now: zero for none. A step-driven session's is its
// creation plus timeout_seconds, as overLimit counts it. A run-driven
// session stepped once its run ended counts its timeout as a run does,
// from its start: a resume is a new start (RunLease.RanBefore is not
// carried over a released lease), so from the step that resumes it
// (resuming: the session reads cancelled and this step resumes it), else
// from its latest resumed entry, else from its creation.
func sessionDeadline(s *Session, l *Ledger, resuming bool, now time.Time) time.Time {
	if s.Rules.TimeoutSeconds <= 0 {
		return time.Time{}
	}
	from := s.CreatedAt
	if s.Driver != DriverStep {
		if resuming {
			from = now
		} else if at, ok := lastResumed(l); ok {
			from = at
		}
	}
	return from.Add(seconds(s.Rules.TimeoutSeconds))
}

// stepDeadline is sessionDeadline, allowing a run-driven session whose run
// died (its run lease expired unreleased: interrupted), and which no
// resume has restarted since, what that run had left: a resume with
// --resume-interrupted would count the time its runs ran (RunLease.RanBefore
// and the last claim's, as claimRun carries them), not the time since the
// run died, and a step must not end the session by a timeout its resumed
// run would not have met. That time left counts from the session's first
// entry since the run's last heartbeat (the first step taken outside it
// landed then), or from now for the first such step, so the steps taken
// outside the run share it. A lease that cannot be read is an error: a
// step that guessed would end the session by a timeout it may not have
// met, or run past one.
func (svc *Service) stepDeadline(ctx context.Context, s *Session, l *Ledger, resuming bool) (time.Time, error) {
	now := svc.now()
	deadline := sessionDeadline(s, l, resuming, now)
	if deadline.IsZero() || s.Driver == DriverStep || resuming {
		return deadline, nil
	}
	ls, ok := svc.store.(LeaseStore)
	if !ok {
		return deadline, nil
	}
	lease, err := ls.ReadRun(ctx, s.ID)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading session %q's run lease to count its timeout: %w", s.ID, err)
	}
	if lease == nil || lease.Released {
		return deadline, nil
	}
	if at, ok := lastResumed(l); ok && at.After(lease.Renewed) {
		return deadline, nil // resumed since the run died: counted from the resume
	}
	from := now
	if at, ok := firstSince(l, lease.Renewed); ok {
		from = at
	}
	ran := lease.RanBefore + max(0, lease.Renewed.Sub(lease.Claimed))
	if left := from.Add(seconds(s.Rules.TimeoutSeconds) - ran); left.After(deadline) {
		return left, nil
	}
	return deadline, nil
}

// firstSince is the time of the ledger's first entry, an agent's or the
// session's, after t.
func firstSince(l *Ledger, t time.Time) (time.Time, bool) {
	var first time.Time
	see := func(at time.Time) {
		if at.After(t) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	for _, es := range l.Agents {
		for i := range es {
			see(es[i].Time)
		}
	}
	for i := range l.Session {
		see(l.Session[i].Time)
	}
	return first, !first.IsZero()
}

// lastResumed is the time of the session log's latest resumed entry.
func lastResumed(l *Ledger) (time.Time, bool) {
	for i := len(l.Session) - 1; i >= 0; i-- {
		if l.Session[i].Kind == SessionResumed {
			return l.Session[i].Time, true
		}
	}
	return time.Time{}, false
}

// endedBeforeStep refuses a step of a run-driven session asked for past its
// deadline outside a run (sessionDeadline), deciding the session by its
// timeout first: overLimit, which every settle consults, leaves a
// run-driven session's timeout to its run.
func (svc *Service) endedBeforeStep(ctx context.Context, s *Session, agent string) error {
	return svc.endedMidStep(ctx, s, agent, fmt.Errorf("session %q is past its timeout (%g s): %w", s.ID, s.Rules.TimeoutSeconds, errSessionTimeout))
}

// endedMidStep is err, unless err says the session ended (errSessionEnded)
// or reached its deadline (errSessionTimeout) while the agent's step ran:
// then the session is settled (a step-driven session's timeout is
// overLimit's; a run-driven one's is forced here, unless a run holds the
// session again) and the step is refused as the session's end refuses
// any, with the FinishedError's facts. A session that reads running after
// all (the clocks disagree by a moment) returns err.
func (svc *Service) endedMidStep(ctx context.Context, s *Session, agent string, err error) error {
	timeout := errors.Is(err, errSessionTimeout)
	if !timeout && !errors.Is(err, errSessionEnded) {
		return err
	}
	var force StopReason
	if timeout && s.Driver != DriverStep && !svc.RunHeld(ctx, s.ID) {
		force = StopTimeout
	}
	set, serr := svc.settle(context.WithoutCancel(ctx), s.ID, force, "")
	if serr != nil {
		return errors.Join(err, serr)
	}
	switch set.st.Life.Status {
	case StatusFinished, StatusFailed, StatusDecided:
		return fmt.Errorf("%w; %s's step was stopped and not recorded", finishedError(s.ID, set.res), agent)
	}
	return err
}

// stepState takes an agent's step lock (take) and derives the state with
// the agent's own lock not counted as in flight, then checks the agent is
// due; one that is not has what take claimed taken back, then its lock let
// go.
func (svc *Service) stepState(ctx context.Context, s *Session, agentID string, take stepTake) (StepLock, *State, error) {
	// The one place the core takes a step lock checks that the agent is in
	// the team: a store does not read the setup for it (LockStep), and an
	// entry of an agent outside the team would land in the ledger, where
	// every reader counts it (its answers make every vote stale).
	if _, err := s.member(agentID); err != nil {
		return nil, nil, err
	}
	lock, undo, err := take(ctx, s.ID, agentID)
	if err != nil {
		return nil, nil, err
	}
	// At once, before anything that may let the lock go: a take that found
	// a dead holder's spend keeps it on the row, counted by every replica,
	// only until this record lands (read below with the ledger, so the
	// step's budget counts it); a store whose row could not outlive the
	// lock would lose it if the record came later.
	svc.recordTakenOver(ctx, s, agentID, lock)
	// A store that lends the step locks with the ledger reads them in the
	// same trip (they are needed whenever the memo below misses); another
	// is asked only then.
	l, lent, inFlight, together, err := svc.sessions.lendTogether(ctx, s.ID)
	if !together && err == nil {
		l, lent, err = svc.sessions.lend(ctx, s.ID)
	}
	var st *State
	if err == nil {
		st, err = svc.ownState(ctx, s, l, lent, inFlight, together, agentID)
	}
	if err == nil {
		if err = due(s, st, agentID); err == nil {
			return lock, st, nil
		}
	}
	if undo != nil {
		undo()
	}
	lock.Release()
	return nil, nil, err
}

// ownState is the state an agent's step starts from, with the agent itself
// not in flight: its loop's latest derivation when there is one for this
// ledger (see memoFor), else a new one, from inFlight when read is set (the
// step locks read with the ledger), else read now.
func (svc *Service) ownState(ctx context.Context, s *Session, l *Ledger, lent bool, inFlight map[string]bool, read bool, agentID string) (*State, error) {
	if lent {
		// Served only to a step that is due: the reasons it is not (and the
		// agents due instead) are said from a state with everyone in flight.
		if st := svc.sessions.memoFor(s, l, agentID); st != nil && st.Agent(agentID).Next {
			return st, nil
		}
	}
	if !read {
		var err error
		if inFlight, err = svc.store.InFlight(ctx, s.ID); err != nil {
			return nil, err
		}
	}
	delete(inFlight, agentID)
	return svc.sessions.deriveFrom(s, l, lent, inFlight), nil
}

// due explains why an agent may not act now, or returns nil.
func due(s *Session, st *State, agentID string) error {
	switch st.Life.Status {
	case StatusRunning:
	case StatusCancelled:
		return fmt.Errorf("%w: %s is cancelled; resume it first", ErrNotNext, s.ID)
	default:
		return fmt.Errorf("%w: %s has ended (%s)", ErrSessionFinished, s.ID, st.Life.Status)
	}
	a := st.Agent(agentID)
	if a.Next {
		return nil
	}
	next := "nobody"
	if len(st.Next) > 0 {
		next = strings.Join(st.Next, ", ")
	}
	return fmt.Errorf("%w: %s %s; due now: %s", ErrNotNext, agentID, a.Why, next)
}

// serverStep calls the agent's model, validates its reply with up to three
// attempts, records the entry, and decides. tally asks for the standing
// votes in the result of a step that leaves the session running (a run's
// loop reads only the state).
func (svc *Service) serverStep(ctx context.Context, s *Session, agentID string, tally bool) (*StepResult, error) {
	s = svc.sessions.kept(s)
	// Counted here from before its lock is taken until after it is let go,
	// so a second step of the agent in this service is told it is busy
	// here, never taken for one in flight elsewhere (joinLanding).
	defer svc.runs.stepping(s.ID, agentID)()
	lock, st, claim, err := svc.lockedStepState(ctx, s, agentID)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	defer claim.release()
	// A step that crashed (its process killed) left its changes in the live
	// workspace; under the step lock, before the model is given the
	// workspace, it is brought back to the latest snapshot (cheap when
	// nothing changed: a walk and a stat per file, no copies).
	svc.rollback(s, agentID)
	v := svc.view(s, st, agentID)
	mcp, err := svc.servers.agent(ctx, s, agentID, svc.agentMCPPlaces)
	if err != nil {
		return nil, err
	}
	step := lock.Step()
	if began, ok := ctx.Value(beganKey{}).(func(int)); ok {
		began(step - 1)
	}
	svc.event(ctx, s.ID, Event{Type: "step_started", Agent: agentID, Step: step, Message: agentID + " started step " + strconv.Itoa(step)})

	start := svc.opts.Now()
	svc.modelCallActivity()
	// The call (and its tools) stops if the step's lease may run out in an
	// outage: another replica may be paying for the same step by then.
	cctx, called := claim.whileSure(ctx)
	cctx, unbound := boundBySession(cctx)
	kit := svc.stepKit(cctx, s, st, v, lock, claim, mcp)
	entry, spent, err := svc.callModel(cctx, s, st, v, step, kit)
	if cerr := kit.close(); cerr != nil {
		svc.log.Warn().Err(cerr).Str("session", s.ID).Str("agent", agentID).Int("step", step).Msg("the step's toolbox did not close cleanly")
	}
	unbound()
	called()
	svc.modelCallActivity()
	if err != nil {
		svc.rollback(s, agentID)
		// Cancelled: no step is written and it can run again; what the
		// provider reported spending is the session's. Recorded before the
		// step's lock goes: the lock's row carries the spend shared with
		// other replicas' budget checks (SpendSharingStepLock), so they
		// count it at worst twice for a moment, never not.
		svc.recordUsage(ctx, s, svc.newUsageRecord(agentID, spent, "cancelled call of step "+strconv.Itoa(step), nil).sharedAs(kit.spend.key()), nil)
		claim.release()
		lock.Release()
		kit.spend.close(spent)
		return nil, err
	}
	// Closed once the entry is in the ledger: until then the steps in
	// flight count this one's spend as live (at worst twice, never not).
	defer kit.spend.close(entry.Usage)
	entry.Agent, entry.Time = agentID, svc.now()
	entry.DurationSeconds = svc.opts.Now().Sub(start).Seconds()
	res, err := svc.land(ctx, s, lock, claim, v, entry, tally, st.Life.Cancels)
	if err == nil {
		svc.keepToolLog(ctx, s, agentID, step, kit)
	}
	// The step's spend when no step was written: unless the ledger holds
	// its entry after all (an attempt whose answer was lost wrote it).
	spend := func(why string) *usageRecord {
		return svc.newUsageRecord(agentID, entry.Usage, "step "+strconv.Itoa(step)+why, landedAs(step, entry)).sharedAs(kit.spend.key())
	}
	switch {
	case errors.Is(err, errCancelledMidStep):
		// Not a step, but the model's spend is the session's, as a
		// cancelled call's is (unless a retried landing that had written
		// the entry was told it was cancelled: then it is in the entry).
		svc.recordUsage(ctx, s, spend(" cancelled as it landed"), nil)
	case errors.Is(err, ErrLeaseLost):
		// Fenced: another replica took the step over (after an outage
		// longer than the lease, say) and runs it again. This call was
		// paid for all the same, unless it had landed before the lease
		// went (an answer lost at the commit).
		svc.recordUsage(ctx, s, spend(", fenced: its lease was lost to another replica"), nil)
	case svc.storeDown(err) && ctx.Err() != nil:
		// The landing gave up with its run while the store was
		// unreachable. An attempt whose answer was lost may have written
		// the entry: once the store answers, the spend is recorded only if
		// the ledger lacks it. (A landing that wrote its entry and then
		// met the outage in its settle, its run still going, has nothing
		// to record.)
		svc.recordUsage(ctx, s, spend(", given up with its run while the store was unreachable"), err)
		err = svc.stoppedInOutage(ctx, agentID, err)
	}
	return res, err
}

// callModel asks the model for one valid workflow call. A cancelled context
// returns its error and no entry (with the usage its attempts reported);
// every other failure becomes an entry.
//
// A step goroutine parks inside the model call, so what this frame holds
// decides how far its stack must grow before the call goes out (each growth
// is a copy, and 1,000 sessions start 4,000 steps at once): entries travel
// by pointer, and judging a reply happens in judge, off this frame.
func (svc *Service) callModel(ctx context.Context, s *Session, st *State, v *view, step int, kit *stepKit) (*Entry, providers.Usage, error) {
	p, err := svc.models.of(s, v.Agent)
	if err != nil {
		return failureEntry(providers.ClassOf(err), err, providers.Free()), providers.Usage{}, nil
	}
	// The step's timeout counts its earlier tries on processes that died
	// (a replica SIGKILLed mid-step): a takeover is one more attempt, with
	// what they left, as a retry here is.
	t := &attempts{usage: providers.Free(), before: kit.before()}
	left := seconds(s.Rules.StepTimeoutSeconds) - t.before
	if left <= 0 {
		return errorEntry(providers.ClassTimeout, stepTimedOut(s, v, t, context.DeadlineExceeded).Error(), t.usage), t.usage, nil
	}
	sctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	watch := svc.activityWatcher(s.ID, v.Agent, step)
	var images []providers.Image
	err = svc.throughOutage(ctx, s.ID, "the step of "+v.Agent, func() (err error) {
		images, err = svc.images(ctx, s)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, providers.Usage{}, context.Cause(ctx)
		}
		return errorEntry(providers.ClassProvider, err.Error(), providers.Free()), providers.Usage{}, nil
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		req := v.request(s, step, t.history)
		req.Attempt, req.Images = attempt, images
		if class, spent := kit.equip(&req, t.usage); spent != "" {
			// The attempts share the step's limits: a retry gets what the
			// earlier attempts left, and none when they left nothing; a
			// takeover, none when the dead tries left nothing.
			if attempt == 0 {
				return errorEntry(class, fmt.Sprintf("the model was not called: %s", spent), t.usage), t.usage, nil
			}
			return errorEntry(class, fmt.Sprintf("no valid workflow call after %d attempts, %s; last problem: %s", attempt, spent, t.problem), t.usage), t.usage, nil
		}
		if watch != nil { // a nil *stepWatcher in the interface would not be nil
			req.Watch = watch
		}
		reply, u, err := p.Step(sctx, req)
		kit.spend.attempted(u)
		if e, err := svc.judge(ctx, sctx, s, st, v, t, reply, u, err); e != nil || err != nil {
			return e, t.usage, err
		}
	}
	return errorEntry(providers.ClassBadOutput, fmt.Sprintf("no valid workflow call after %d attempts; last problem: %s", maxAttempts, t.problem), t.usage), t.usage, nil
}

// attempts is what a step's attempts have gathered: usage, and the refused
// replies with their problems, which the next attempt is shown.
type attempts struct {
	usage   providers.Usage
	history []providers.Turn
	problem string
	before  time.Duration // the step's earlier tries on processes that died
}

// stepTimedOut is why a step that timed out gave no answer: the stalled
// model is named in the message itself, so the line, the Dropped line, the
// timeline and status all say who stalled, and what earlier tries of the
// step on processes that died took of its time.
func stepTimedOut(s *Session, v *view, t *attempts, err error) error {
	if t.before > 0 {
		return fmt.Errorf("no answer from %s within %g s (step_timeout_seconds; %s of it on earlier tries whose processes stopped answering): %w",
			s.modelOf(v.Agent), s.Rules.StepTimeoutSeconds, t.before.Round(100*time.Millisecond), err)
	}
	return fmt.Errorf("no answer from %s within %g s (step_timeout_seconds): %w", s.modelOf(v.Agent), s.Rules.StepTimeoutSeconds, err)
}

// addAttempt adds an attempt's usage to its step's. An attempt whose cost
// is not known (a CLI stopped at a limit before it said what it spent)
// leaves the cost the other attempts are known to have spent, marked
// estimated (a lower bound), where a plain sum would make the step's cost
// unknown: spend counts an unknown cost as nothing, so money known spent
// would drop out of the budget. Nothing known spent (the sum's known zero
// start, a free attempt) leaves the cost unknown, as the plain sum does.
func addAttempt(step, u providers.Usage) providers.Usage {
	sum := step.Add(u)
	if sum.CostUSD != nil {
		return sum
	}
	for _, known := range []*float64{step.CostUSD, u.CostUSD} {
		if known != nil && *known > 0 {
			c := *known
			sum.CostUSD, sum.CostEstimated = &c, true
		}
	}
	return sum
}

// judge turns one reply into the step's entry, or records why it was refused
// and returns nil so that the next attempt runs. A cancelled run returns its
// cause.
func (svc *Service) judge(ctx, sctx context.Context, s *Session, st *State, v *view, t *attempts, reply providers.Action, u providers.Usage, err error) (*Entry, error) {
	t.usage = addAttempt(t.usage, u)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		class := providers.ClassOf(err)
		if errors.Is(err, context.DeadlineExceeded) || sctx.Err() != nil {
			class = providers.ClassTimeout
			err = stepTimedOut(s, v, t, err)
		}
		return failureEntry(class, err, t.usage), nil
	}
	d, prob := validate(s, st, v, reply)
	if prob == "" && len(d.Files) > 0 {
		prob = svc.writeAnswerFiles(s, v.Agent, d.Files)
	}
	if prob == "" {
		return entryFor(st, v, d, t.usage), nil
	}
	t.problem = prob
	t.history = append(t.history, providers.Turn{Reply: reply, Problem: prob})
	return nil, nil
}

func errorEntry(class providers.Class, msg string, u providers.Usage) *Entry {
	return &Entry{Kind: KindError, Class: class, Message: msg, Usage: u}
}

// failureEntry is the entry of a call that failed with err, the wait its
// provider asked for kept beside its message.
func failureEntry(class providers.Class, err error, u providers.Usage) *Entry {
	e := errorEntry(class, err.Error(), u)
	e.RetryAfterMS = providers.RetryAfterOf(err).Milliseconds()
	return e
}

// entryFor turns a validated call into the entry the ledger records.
func entryFor(st *State, v *view, d decision, u providers.Usage) *Entry {
	a := st.Agent(v.Agent)
	e := &Entry{Kind: d.Kind, SeenSteps: v.SeenSteps, Usage: u}
	switch d.Kind {
	case KindAnswer:
		e.Content, e.AnswerNum = d.Content, a.Answers+1
		e.Label = AnswerLabel(a.Alias, e.AnswerNum)
		e.Plan, e.Verdict, e.Concerns = d.Plan, d.Verdict, d.Concerns
	case KindVote:
		e.Target, e.TargetLabel, e.Reason, e.Revote = d.Target, d.TargetLabel, d.Reason, v.Revote
	}
	return e
}

// land writes an entry under the step lock and the step's lease (claim, nil
// for a host's step or a store without step leases), releases them, and
// decides. A step whose lease was lost writes nothing (fenced), and so does
// one whose session was cancelled since it began (cancels: the count then;
// cancelfence.go).
func (svc *Service) land(ctx context.Context, s *Session, lock StepLock, claim *stepClaim, v *view, e *Entry, tally bool, cancels int) (*StepResult, error) {
	svc.beforeLand(ctx, s, lock.Step(), e)
	svc.hideRecordedPaths(s, e)
	entry, unlock, err := svc.appendLanding(ctx, s, lock, claim, e, cancels)
	claim.release()
	lock.Release()
	if err != nil {
		discardStage(e)
		return nil, err
	}
	// The entry is written: deciding must happen even if the caller has gone.
	// It is decided under the session lock the append took, so no cancel
	// falls between the two.
	dctx := context.WithoutCancel(ctx)
	if svc.hears(s.ID, ObservedEntry) {
		e := entry
		svc.publish(Observation{SessionID: s.ID, Kind: ObservedEntry, Entry: &e})
	}
	svc.event(dctx, s.ID, landedEvent(entry))
	set, err := svc.settleLocked(dctx, s.ID, "", "", false)
	unlock()
	if err != nil {
		return nil, err
	}
	st, res := set.st, set.res
	var consensus ConsensusView
	switch {
	case res != nil:
		consensus = res.Consensus
		if st.Life.Status != StatusRunning {
			// The session is over. (A store that keeps files gets a result
			// from every landing: that is no end.)
			svc.servers.close(s.ID)
		}
	case tally:
		consensus = consensusView(s, st) // still running: only the tally is built
	}
	return svc.stepResult(s, entry, st, res, consensus), nil
}

// hideRecordedPaths names this process's paths in a failed step's error as
// the session's record keeps them (recordedText): its step result, progress
// line, timeline event and last_error are read from the entry, by readers
// whose directories are not this process's. The operator's log keeps the
// error as it was.
func (svc *Service) hideRecordedPaths(s *Session, e *Entry) {
	if e.Kind != KindError {
		return
	}
	if kept := svc.recordedText(e.Message); kept != e.Message {
		svc.log.Info().Str("session", s.ID).Str("agent", e.Agent).Str("error", e.Message).Msg("step failed; its error is recorded with the server's paths named by session")
		e.Message = kept
	}
}

// appendLanding appends a step's entry, fenced by its lease and by the
// session's cancels, and returns it with the session lock still held. A
// store that is unreachable does not lose the model's reply: the step keeps
// its lock and lease and tries the landing again, fenced each time
// (outage.go), until the store answers or the step is cancelled; the
// session lock is let go while it waits.
func (svc *Service) appendLanding(ctx context.Context, s *Session, lock StepLock, claim *stepClaim, e *Entry, cancels int) (entry Entry, unlock func(), err error) {
	retried := false
	err = svc.throughOutage(ctx, s.ID, "the step of "+e.Agent, func() (err error) {
		entry, unlock, err = svc.tryLanding(ctx, s, lock, claim, e, cancels, retried)
		retried = true // tried again only after the store was unreachable
		return err
	})
	if err != nil {
		return Entry{}, nil, err
	}
	return entry, unlock, nil
}

// tryLanding is one attempt of appendLanding; retried says an earlier one
// found the store unreachable.
func (svc *Service) tryLanding(ctx context.Context, s *Session, lock StepLock, claim *stepClaim, e *Entry, cancels int, retried bool) (Entry, func(), error) {
	ll, leased := lock.(LeasedLanding)
	leased = leased && claim != nil
	if err := claim.fence(ctx, leased); err != nil {
		return Entry{}, nil, err
	}
	unlock, err := svc.lockLanding(ctx, s, e.Agent, lock.Step(), cancels, leased, retried)
	if err != nil {
		return Entry{}, nil, err
	}
	var entry Entry
	if leased {
		entry, err = claim.land(ctx, ll, *e, cancels)
	} else {
		entry, err = appendStep(ctx, lock, *e, cancels)
	}
	if err != nil {
		unlock()
		return Entry{}, nil, err
	}
	return entry, unlock, nil
}

// appendStep appends a landing's entry, letting the step lock go in the same
// write when the store can: land lets it go right after, and what it does
// first (releasing the step's lease) needs only the lease, which keeps the
// agent's next step out until then. A host's markingLock cannot: it marks
// the view used under the lock after the append (it embeds StepLock, so it
// has no AppendAndRelease); it fences the landing by the session's cancels
// (cancels: the count the step began with) in the write where the store
// can (UncancelledLanding; preferred to AppendAndRelease, which saves a
// round trip: only a host's step lands here on a store that has both, its
// server steps always holding a lease). A server step on a store whose
// lock is a LeasedLanding does not come here: its lease and the cancels
// are checked, and the lease released, in the same write too
// (stepClaim.land).
func appendStep(ctx context.Context, lock StepLock, e Entry, cancels int) (Entry, error) {
	if u, ok := lock.(UncancelledLanding); ok {
		return u.AppendUncancelled(ctx, e, cancels)
	}
	if r, ok := lock.(ReleasingStepLock); ok {
		return r.AppendAndRelease(ctx, e)
	}
	return lock.Append(ctx, e)
}

// stepResult describes a landed entry as a step returns it.
func (svc *Service) stepResult(s *Session, entry Entry, st *State, res *TeamResult, consensus ConsensusView) *StepResult {
	out := &StepResult{
		state:       st,
		model:       s.modelOf(entry.Agent),
		step:        entry.Step,
		SessionID:   s.ID,
		AgentID:     entry.Agent,
		Action:      actionName(entry.Kind),
		Label:       entry.Label,
		TargetLabel: entry.TargetLabel,
		ErrorClass:  string(entry.Class),
		Message:     svc.HidePaths(entry.Message), // an entry recorded before its paths were (hideRecordedPaths)
		SeenSteps:   entry.SeenSteps,
		Consensus:   consensus,
		NextAgents:  append([]string{}, st.Next...),
	}
	if out.SeenSteps == nil {
		out.SeenSteps = map[string]int{}
	}
	if entry.Kind == KindVote {
		out.Target = Alias(s.Aliases[entry.Target])
		out.Stale = IsVoteStale(&entry, st.Latest)
	}
	if st.Life.Status != StatusRunning {
		out.Finished = st.Life.Finished != nil
		out.Result = res
	}
	return out
}

func actionName(k EntryKind) string {
	switch k {
	case KindAnswer:
		return providers.ToolNewAnswer
	case KindVote:
		return providers.ToolVote
	}
	return "error"
}

func landedEvent(e Entry) Event {
	ev := Event{Agent: e.Agent, Step: e.Step, Type: string(e.Kind)}
	switch e.Kind {
	case KindAnswer:
		ev.Message = e.Agent + " answered " + e.Label // not Sprintf: two events a step
	case KindVote:
		ev.Message = e.Agent + " voted for " + e.TargetLabel
		if e.Revote {
			ev.Message += " (re-vote)"
		}
	default:
		// The timeline is read line by line (status --watch, status, the live
		// view's table): the reason goes on one masked line, cut; error.json
		// keeps it whole.
		ev.Message = fmt.Sprintf("%s failed (%s): %s", e.Agent, e.Class, Reason(e.Message, ReasonRunes))
	}
	return ev
}

// resume lifts a cancellation so the session can run again: the caller's
// request saw seen cancels, and a cancel recorded after it stands (the
// request came before it: cancelfence.go).
func (svc *Service) resume(ctx context.Context, id, why string, seen int) error {
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	l, err := svc.sessions.ledger(ctx, id)
	if err != nil {
		return err
	}
	lc := lifecycle(l.Session)
	if lc.Status != StatusCancelled || lc.Cancels > seen {
		return nil
	}
	// Written only while no cancel (or end) landed since the read: one the
	// lock's second holder recorded meanwhile stands (sinceread.go), as one
	// counted above does.
	_, err = svc.appendSession(withLogRead(ctx, id, lc.read()), id, SessionEntry{Kind: SessionResumed, Time: svc.now(), Reason: why})
	if errors.Is(err, ErrChangedSinceRead) {
		return nil
	}
	if err != nil {
		return err
	}
	svc.event(ctx, id, Event{Type: "resumed", Message: "session resumed: " + why})
	return nil
}
