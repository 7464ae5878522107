package coordination

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// leaseOnly is a store that holds one run lease record, cur.
type leaseOnly struct {
	Store
	cur *RunLease
}

func (s *leaseOnly) AcquireRun(context.Context, string, LeaseOwner, time.Duration) (RunLease, error) {
	return RunLease{}, errors.New("not used")
}
func (s *leaseOnly) RenewRun(context.Context, string, int64, time.Duration) (RunLease, error) {
	return RunLease{}, errors.New("not used")
}
func (s *leaseOnly) ReleaseRun(context.Context, string, int64) error { return errors.New("not used") }
func (s *leaseOnly) ReadRun(context.Context, string) (*RunLease, error) {
	return s.cur, nil
}

// TestNoUndoStartsOnceAShutdownWaitedForThem: a run claim failing as the
// service stops, after its Shutdown waited for the undos, starts none: the
// store is about to close under it.
func TestNoUndoStartsOnceAShutdownWaitedForThem(t *testing.T) {
	u := &runUndos{}
	if err := u.finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	u.start(&leases{log: zerolog.Nop()}, &leaseOnly{}, "s", 1)
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.by) != 0 {
		t.Errorf("an undo started after the shutdown waited for them: %v", u.by)
	}
}

// TestOnlyALostClaimCountsAsALostLease: a run counts as one that lost its
// lease when its claim was found lost (its heartbeat, or a fenced write the
// store refused), not for any error that wraps ErrLeaseLost: a record given
// up in an outage that only may have outlasted the lease is not a loss.
func TestOnlyALostClaimCountsAsALostLease(t *testing.T) {
	var c counts
	held, lost := &runClaim{beat: newBeat()}, &runClaim{beat: newBeat()}
	lost.markLost()
	lost.markLost() // twice: once closed
	c.runEnded(nil)
	c.runEnded(held)
	if n := c.lostLease.Load(); n != 0 {
		t.Fatalf("%d lost leases counted for a run without a claim and one whose claim held", n)
	}
	c.runEnded(lost)
	if n := c.lostLease.Load(); n != 1 {
		t.Errorf("%d lost leases counted for a run whose claim was lost; want 1", n)
	}
}
