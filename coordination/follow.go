package coordination

import (
	"context"
	"sort"
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
	s, err := svc.sessions.get(ctx, id)
	if err != nil {
		return nil, err
	}
	// Its Cancels: those the session had as it was followed.
	cancels, err := svc.cancelsNow(ctx, id)
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	changes, err := svc.store.Watch(wctx, id)
	if err != nil {
		stop()
		return nil, err
	}
	r := &Run{ID: id, done: make(chan struct{}), cancels: cancels, seen: cancels}
	r.cancel = func(error) {
		if _, err := svc.Cancel(context.WithoutCancel(ctx), id); err != nil {
			svc.log.Warn().Err(err).Str("session", id).Msg("could not cancel the session followed")
		}
	}
	// What this service's followers of the session have told, shared, so
	// two followers here (two callers waiting, a finalize following) tell
	// each step and the end once, whichever reads first.
	told, leave := svc.runs.follow(id)
	if svc.hears(id, ObservedProgress) {
		told.start(func() map[string]int { return svc.toldSteps(ctx, id, nil) })
	}
	go func() {
		defer close(r.done)
		defer stop()
		defer leave()
		tick := time.NewTicker(followPoll)
		defer tick.Stop()
		for {
			res, cancels, err := svc.resultRead(context.WithoutCancel(ctx), id)
			switch {
			case err != nil && svc.storeDown(err):
				// The holder waits an outage out; so does its follower
				// (the last result read stands meanwhile).
			case err != nil:
				r.err = err
				return
			default:
				r.res, r.seen = res, cancels
			}
			if err == nil && svc.hears(id, ObservedProgress) {
				told.steps(func(t map[string]int) map[string]int { return svc.toldSteps(ctx, id, t) })
			}
			if err == nil && !svc.stillRunning(ctx, s, res) {
				told.end(func() { svc.tellEnd(id, res) })
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

// stillRunning tells whether a followed run goes on: running, or decided
// while a live holder makes the final call, or finished under apply: auto
// while a live holder writes the winner's changes (autoApply), so the
// follower's result says what was written (a session whose run ended, or
// whose lease cannot be read, is where it stops).
func (svc *Service) stillRunning(ctx context.Context, s *Session, res *TeamResult) bool {
	switch res.Status {
	case StatusRunning:
		return true
	case StatusDecided:
		return svc.leaseLive(context.WithoutCancel(ctx), s.ID)
	case StatusFinished:
		return autoApplyPending(s, res) && svc.leaseLive(context.WithoutCancel(ctx), s.ID)
	}
	return false
}

// toldSteps tells the progress of the steps that landed since told (agent
// → its latest step told), as the holder's loop tells its own: a follower's
// subscribers (run_team{session_id, wait} on another replica) hear the
// run's steps wherever it runs. With told nil it only reads where the
// ledger stands, telling nothing. It returns the steps told now; a failed
// read keeps told.
func (svc *Service) toldSteps(ctx context.Context, id string, told map[string]int) map[string]int {
	s, l, st, err := svc.sessions.load(context.WithoutCancel(ctx), id)
	if err != nil {
		if told == nil {
			told = map[string]int{}
		}
		return told
	}
	now := make(map[string]int, len(l.Agents))
	var landed []Entry
	for agent, es := range l.Agents {
		if n := len(es); n > 0 {
			now[agent] = es[n-1].Step
		}
		if told == nil {
			continue
		}
		for _, e := range es {
			if e.Step > told[agent] {
				landed = append(landed, e)
			}
		}
	}
	sort.Slice(landed, func(i, j int) bool { return landed[i].Time.Before(landed[j].Time) })
	for _, e := range landed {
		res := svc.stepResult(s, e, st, nil, ConsensusView{})
		svc.tell(Progress{SessionID: id, Kind: kindOfAction(res.Action), Agent: e.Agent, Message: res.Line(), Steps: st.Steps, Time: svc.now()})
	}
	return now
}

// tellEnd tells a followed run's end as the holder's loop tells it.
func (svc *Service) tellEnd(id string, res *TeamResult) {
	switch res.Status {
	case StatusCancelled:
		svc.tell(Progress{SessionID: id, Kind: ProgressCancelled, Message: "session cancelled", Time: svc.now()})
	case StatusInterrupted:
		svc.tell(Progress{SessionID: id, Kind: ProgressError, Message: "the run's holder died; the session is interrupted", Time: svc.now()})
	default:
		svc.tell(Progress{SessionID: id, Kind: ProgressFinished, Message: finishedMessage(res), Time: svc.now()})
	}
}
