package coordination

import (
	"context"
	"fmt"
	"strings"
)

// finalizeElsewhere finalizes a session whose run another process holds (a
// replica sharing the database, or a process on the same state directory):
// a load balancer sends finalize_team wherever it likes. The decision is
// recorded here (StopFinalized, with final if given), under the session
// lock as any settle is; the holder's loop hears it through its watch, as
// it hears a cancel, stops its steps and writes the final answer with the
// recorded strategy, as it would for its own decision. This call follows
// the run to that end and returns its result. A holder that dies meanwhile
// leaves the session decided and, once its lease expires, interrupted, as
// does a run lock held with no run behind it (a start between its lock and
// its lease, criteria being attached, a step-driven session's Finalize):
// Finalize then claims the session again until it gets it, and writes the
// answer itself unless the other did. held is the claim's refusal, returned for a
// session cancelled meanwhile (its holder is stopping; the same call again
// finalizes it). A session it finds ended answers with its result
// (endedAnswer).
func (svc *Service) finalizeElsewhere(ctx context.Context, id string, final FinalStrategy, held error) (_ *TeamResult, overruled string, _ error) {
	if err := svc.openOnce(ctx, id); err != nil {
		return nil, "", err
	}
	set, err := svc.settle(ctx, id, "", "")
	if err != nil {
		return nil, "", err
	}
	// A session decided already is being finalized with its decision's
	// strategy (its holder's final call, or another Finalize's): a
	// different one asked for here is not what the answer will be, and
	// the result says so rather than pass it off as this call's.
	switch set.st.Life.Status {
	case StatusFinished, StatusFailed:
		return endedAnswer(set, final)
	case StatusDecided:
		if was := decidedStrategy(set.l, set.s); final != "" && final != was {
			overruled = fmt.Sprintf("%s was asked for, but the session was already being finalized with %s, whose answer this is", final, was)
		}
	case StatusRunning:
		// Only the decision, even for the winner's answer as it stands:
		// the finish applies the winner's files and lets the worktrees go,
		// which is the holder's to do once its steps have stopped.
		if set, err = svc.settle(withDecisionOnly(ctx), id, StopFinalized, final); err != nil {
			return nil, "", err
		}
	}
	switch set.st.Life.Status {
	case StatusCancelled:
		return nil, "", held
	case StatusFinished, StatusFailed:
		return set.res, "", nil // failed: no answer to finalize
	}
	f, err := svc.Follow(ctx, id)
	if err != nil {
		return nil, overruled, fmt.Errorf("the decision was recorded, but following the run that writes its final answer failed (the session's status shows how it ends): %w", err)
	}
	<-f.Done()
	res, err := f.Result()
	return res, overruled, err
}

// endedAnswer is Finalize's answer for a session set found ended: its
// result, whoever ended it, so finalize_team asked again (its first answer
// lost, or collected on another replica, where the stop reason may still
// be the agreement that decided it) gets what the first got, with a note
// if it asks for another strategy than the one written.
func endedAnswer(set settled, final FinalStrategy) (_ *TeamResult, overruled string, _ error) {
	res := set.res
	if was := finishedStrategy(set.l, set.s); final != "" && final != was && res.Status == StatusFinished {
		overruled = fmt.Sprintf("%s was asked for, but the session had already been finalized with %s, whose answer this is", final, was)
	}
	return res, overruled, nil
}

// finishedStrategy is the strategy a finished session's answer was written
// with.
func finishedStrategy(l *Ledger, s *Session) FinalStrategy {
	for i := len(l.Session) - 1; i >= 0; i-- {
		if e := l.Session[i]; e.Kind == SessionFinished {
			return FinalStrategy(e.Reason)
		}
	}
	return s.Rules.Final
}

// overruledNote is res, if another wrote it, with the note of a Finalize
// whose strategy came too late (finalizeElsewhere), for this call alone:
// the session's own result is the writer's.
func overruledNote(res *TeamResult, overruled string) *TeamResult {
	if res == nil || overruled == "" || !writtenElsewhere(res) {
		return res
	}
	out := *res
	out.FinalNote = strings.TrimPrefix(out.FinalNote+"; "+overruled, "; ")
	return &out
}

// decisionOnlyKey marks a settle that records a decision and never a
// finish (finalizeElsewhere): a winner's-answer strategy is recorded as a
// decision too, for the run's holder to finish.
type decisionOnlyKey struct{}

func withDecisionOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, decisionOnlyKey{}, true)
}

func decisionOnly(ctx context.Context) bool {
	only, _ := ctx.Value(decisionOnlyKey{}).(bool)
	return only
}

// writtenElsewhere tells whether a followed finalize ended: a session still
// decided (or interrupted, or running) when its follower stopped has nobody
// writing its answer.
func writtenElsewhere(res *TeamResult) bool {
	switch res.Status {
	case StatusDecided, StatusInterrupted, StatusRunning:
		return false
	}
	return true
}
