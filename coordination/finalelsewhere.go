package coordination

import (
	"context"
	"fmt"
)

// finalizeElsewhere finalizes a session whose run another process holds (a
// replica sharing the database, or a process on the same state directory):
// a load balancer sends finalize_team wherever it likes. The decision is
// recorded here (StopFinalized, with final if given), under the session
// lock as any settle is; the holder's loop hears it through its watch, as
// it hears a cancel, stops its steps and writes the final answer with the
// recorded strategy, as it would for its own decision. This call follows
// the run to that end and returns its result. A holder that dies meanwhile
// leaves the session decided and, once its lease expires, interrupted: the
// result says so, and a replica resuming those writes the answer. held is
// the claim's refusal, returned for a session cancelled meanwhile (its
// holder is stopping; the same call again finalizes it).
func (svc *Service) finalizeElsewhere(ctx context.Context, id string, final FinalStrategy, held error) (*TeamResult, error) {
	if err := svc.openOnce(ctx, id); err != nil {
		return nil, err
	}
	set, err := svc.settle(ctx, id, "", "")
	if err != nil {
		return nil, err
	}
	switch set.st.Life.Status {
	case StatusFinished, StatusFailed:
		return nil, finishedError(id, set.res)
	case StatusRunning:
		if set, err = svc.settle(ctx, id, StopFinalized, final); err != nil {
			return nil, err
		}
	}
	switch set.st.Life.Status {
	case StatusCancelled:
		return nil, held
	case StatusFinished, StatusFailed:
		return set.res, nil // failed: no answer to finalize
	}
	f, err := svc.Follow(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("the decision was recorded, but following the run that writes its final answer failed (the session's status shows how it ends): %w", err)
	}
	<-f.Done()
	return f.Result()
}
