package coordination

import (
	"context"
	"errors"
	"testing"
	"time"
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

// TestARunsFinishChecksItsLeaseBeforeTouchingFiles: runLeaseHeld, which a
// run's finish asks before it applies the winner's files, says the lease
// is lost once another claim replaced the run's or it was released, and
// asks nothing of a context that is not the run's of this session (a
// host-driven finish, finalize, another session's write).
func TestARunsFinishChecksItsLeaseBeforeTouchingFiles(t *testing.T) {
	st := &leaseOnly{cur: &RunLease{Version: 3}}
	svc := &Service{store: st}
	run := withRunLease(context.Background(), &runClaim{ls: st, id: "s", version: 3})
	if err := svc.runLeaseHeld(run, "s"); err != nil {
		t.Errorf("the run's own claim, current: %v; want it held", err)
	}
	st.cur = &RunLease{Version: 4}
	if err := svc.runLeaseHeld(run, "s"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the run's claim replaced by another: %v; want ErrLeaseLost", err)
	}
	st.cur = &RunLease{Version: 3, Released: true}
	if err := svc.runLeaseHeld(run, "s"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the run's claim released: %v; want ErrLeaseLost", err)
	}
	for what, ctx := range map[string]context.Context{
		"no run's":           context.Background(),
		"another session's":  withRunLease(context.Background(), &runClaim{ls: st, id: "other", version: 3}),
		"the run's, dropped": withoutRunLease(run),
	} {
		if err := svc.runLeaseHeld(ctx, "s"); err != nil {
			t.Errorf("a context %s: %v; want no check", what, err)
		}
	}
}
