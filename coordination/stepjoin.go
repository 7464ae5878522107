package coordination

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// landingPoll is how often a step waiting on another process's step looks
// again without a change to wake it: a holder that died lets its lock
// expire, and an expiry is no write, so no watcher hears it.
const landingPoll = time.Second

// joinLanding answers a server step refused because the agent has a step in
// flight in another process (another replica, or another server over the
// same state directory; a step in flight here is refused, as before, and
// mcp's flights join it) with that step, once it lands: the same call here
// joins the flight in progress (mcp's flights), and a client whose step
// outlived its wait and whose retry a load balancer sent elsewhere is owed
// the same, not a refusal that has it pay for a second step. after is the
// agent's latest step when the call began; a landing past it is the answer.
// A step that ends without landing (its caller went away, its holder died
// and its lock expired) is run here, as the call asked; a cancel of the
// session meanwhile ends the wait instead (Step's untilCancelled, or the
// check below when the cancel came first).
func (svc *Service) joinLanding(ctx context.Context, s *Session, agentID string, after, cancels int) (*StepResult, error) {
	changes, err := svc.store.Watch(ctx, s.ID)
	if err != nil {
		changes = nil // the poll below still sees the landing
	}
	poll := time.NewTicker(landingPoll)
	defer poll.Stop()
	// The other step lasts at most its timeout, and its lock a TTL past a
	// holder's death: a step still in flight well past both is wedged
	// there, and this call stops waiting on it (ErrAgentBusy, as before).
	limit := time.NewTimer(seconds(s.Rules.StepTimeoutSeconds) + 2*svc.leases.ttl)
	defer limit.Stop()
	for {
		res, settled, err := svc.landedSince(ctx, s, agentID, after, cancels)
		if settled {
			return res, err
		}
		if err != nil && ctx.Err() == nil && !svc.storeDown(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); errors.Is(cause, errCancelled) {
				return nil, fmt.Errorf("session %q was %w while %s's step in flight in another process ran", s.ID, errCancelled, agentID)
			}
			return nil, fmt.Errorf("stopped waiting for %s's step in flight in another process: %w", agentID, context.Cause(ctx))
		case _, ok := <-changes:
			if !ok {
				changes = nil
			}
		case <-poll.C:
		case <-limit.C:
			return nil, &BusyError{Session: s.ID, Agent: agentID, By: "another process, past its step timeout and lease"}
		}
	}
}

// landedSince looks once: the agent's step that landed past after, or, with
// the agent no longer in flight and nothing landed, a step run here. settled
// is false while the other step is still in flight (or the store could not
// tell).
func (svc *Service) landedSince(ctx context.Context, s *Session, agentID string, after, cancels int) (*StepResult, bool, error) {
	inFlight, err := svc.store.InFlight(ctx, s.ID)
	if err != nil {
		return nil, false, err
	}
	_, l, st, err := svc.sessions.load(ctx, s.ID)
	if err != nil {
		return nil, false, err
	}
	if e := firstEntryAfter(l, agentID, after); e != nil {
		res := svc.snapshot(s, l, st)
		return svc.stepResult(s, *e, st, res, res.Consensus), true, nil
	}
	switch st.Life.Status {
	case StatusDecided, StatusFinished, StatusFailed:
		// Decided or ended since this call's first look: no step of the
		// agent is owed, and what holds its lock now is the final call
		// (finalLock) or a step the end already counts; waiting on it
		// kept a step racing a finalize_team for the whole final call.
		return nil, true, finishedError(s.ID, svc.snapshot(s, l, st))
	}
	if inFlight[agentID] {
		return nil, false, nil
	}
	if st.Life.Cancels > cancels {
		return nil, true, fmt.Errorf("session %q was %w while %s's step in flight in another process ran; that step was not recorded", s.ID, errCancelled, agentID)
	}
	res, err := svc.serverStep(ctx, s, agentID, true)
	if errors.Is(err, ErrAgentBusy) {
		return nil, false, nil // taken again meanwhile: wait for that one
	}
	return res, true, err
}

// firstEntryAfter is the agent's first ledger entry past step after (the
// step a call that began there took), or nil.
func firstEntryAfter(l *Ledger, agentID string, after int) *Entry {
	for i, e := range l.Agents[agentID] {
		if e.Step > after {
			return &l.Agents[agentID][i]
		}
	}
	return nil
}

// landedResult answers a retried step with the entry it landed as, and
// the session as it stands now.
func (svc *Service) landedResult(ctx context.Context, s *Session, e Entry) (*StepResult, error) {
	_, l, st, err := svc.sessions.load(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	res := svc.snapshot(s, l, st)
	return svc.stepResult(s, e, st, res, res.Consensus), nil
}

// StepNow answers a landed step's result again with the session as it
// stands now, as a retry of the step is answered (landedResult): a surface
// that kept the result while the session moved on (mcp's flights, whose
// continuation may come minutes later, after other agents stepped) must not
// hand out the next agents, consensus and end of the moment it landed. A
// view, or a step whose entry is not found, is returned as it is.
func (svc *Service) StepNow(ctx context.Context, r *StepResult) (*StepResult, error) {
	if r == nil || r.step == 0 {
		return r, nil
	}
	s, l, st, err := svc.sessions.load(ctx, r.SessionID)
	if err != nil {
		return nil, err
	}
	for _, e := range l.Agents[r.AgentID] {
		if e.Step == r.step {
			res := svc.snapshot(s, l, st)
			return svc.stepResult(s, e, st, res, res.Consensus), nil
		}
	}
	return r, nil
}

// latestStep is the step number of the agent's newest entry, 0 before any.
func latestStep(st *State, agentID string) int {
	entries := st.Agent(agentID).Entries
	if len(entries) == 0 {
		return 0
	}
	return entries[len(entries)-1].Step
}
