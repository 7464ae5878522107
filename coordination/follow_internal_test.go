package coordination

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestAFollowerWaitsForAnAutoApplyWhileItsRunHoldsOn: a session finished
// under apply: auto reads its changes pending until its run has written
// and recorded them (autoApply, after the finished entry): a follower goes
// on while the run holds its lease, so its result says what was written,
// and stops once the run let the lease go (a crash between: they stay
// pending). A session that previews, or whose apply is recorded, ends its
// follower at once.
func TestAFollowerWaitsForAnAutoApplyWhileItsRunHoldsOn(t *testing.T) {
	held := &RunLease{Expires: time.Now().Add(time.Hour)}
	st := &leaseOnly{cur: held}
	svc := &Service{store: st, opts: Options{Now: time.Now}}
	s := &Session{ID: "s", Apply: ApplyAuto}
	ctx := context.Background()
	pending := &TeamResult{Status: StatusFinished, ChangesPending: true}
	if !svc.stillRunning(ctx, s, pending) {
		t.Error("finished under apply: auto, changes pending, its run holding on: the follower stopped before the apply was recorded")
	}
	applied := &TeamResult{Status: StatusFinished, Applied: &workspace.Applied{}}
	if svc.stillRunning(ctx, s, applied) {
		t.Error("the apply recorded: the follower went on")
	}
	st.cur = &RunLease{Expires: time.Now().Add(time.Hour), Released: true}
	if svc.stillRunning(ctx, s, pending) {
		t.Error("the run let its lease go with the changes pending: the follower went on for ever")
	}
	st.cur = held
	s = &Session{ID: "s", Apply: ApplyPreview}
	if svc.stillRunning(ctx, s, pending) {
		t.Error("a previewing session's changes wait for apply_changes: the follower went on")
	}
}
