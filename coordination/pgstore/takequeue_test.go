package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestATakeQueuedBehindASlowGroupReturnsWhenItsContextEnds: a step lock
// take waiting for the next group, behind a take in flight that waits for
// a connection, returns its context's error once its deadline passes,
// not once the take ahead is answered, and its lock is never taken.
func TestATakeQueuedBehindASlowGroupReturnsWhenItsContextEnds(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	for _, id := range []string{"lead", "late"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	release := holdPool(t, a)
	lead := make(chan error, 1)
	go func() {
		l, err := a.LockStep(ctx, "lead", "agent_a")
		if err == nil {
			l.Release()
		}
		lead <- err
	}()
	await(t, "the lead's take in flight", func() bool { return a.db.stepTakes.inFlight() == 1 })
	late, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	answer := make(chan error, 1)
	go func() {
		l, err := a.LockStep(late, "late", "agent_a")
		if err == nil {
			l.Release()
		}
		answer <- err
	}()
	var err error
	returned := false
	select {
	case err = <-answer:
		returned = true
	case <-time.After(10 * time.Second):
		t.Error("a take queued behind one in flight still waited 10 s after its deadline passed")
	}
	release()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	if !returned {
		err = <-answer
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the take whose deadline passed while queued returned %v, want context.DeadlineExceeded", err)
	}
	if n := rowsOf(t, a, "locks", "late"); n != 0 {
		t.Errorf("the take whose deadline passed while queued left %d lock rows, want none", n)
	}
}
