package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestATakeQueuedBehindASlowGroupReturnsWhenItsContextEnds: a step lock
// take waiting for the next group, behind a take in flight that waits for
// a connection, returns its context's error once its deadline passes,
// not once the take ahead is answered, and its lock is never taken.
func TestATakeQueuedBehindASlowGroupReturnsWhenItsContextEnds(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	sessionsOn(t, a, "lead", "late")
	release := holdPool(t, a)
	lead := lockStepOff(ctx, a, "lead", "agent_a")
	await(t, "the lead's take in flight", func() bool { return a.db.stepTakes.inFlight() == 1 })
	late, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	answer := lockStepOff(late, a, "late", "agent_a")
	err, returned := answerWithin(answer, 10*time.Second)
	if !returned {
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

// TestALeasedTakeThatLeftTheQueueNamesNoClaim: a LockStepWithLease
// whose context ends while it waits for the next group was never sent,
// so it names no claim for its caller to take back (which would cost the
// caller a read of the session's leases, on a replica already behind).
func TestALeasedTakeThatLeftTheQueueNamesNoClaim(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	sessionsOn(t, a, "lead", "late")
	owner := coordination.ThisProcess("test")
	release := holdPool(t, a)
	lead := lockStepOff(ctx, a, "lead", "agent_a")
	await(t, "the lead's take in flight", func() bool { return a.db.stepTakes.inFlight() == 1 })
	late, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	type answer struct {
		lease *coordination.RunLease
		err   error
	}
	answers := make(chan answer, 1)
	go func() {
		lock, lease, err := a.LockStepWithLease(late, "late", "agent_a", owner, time.Minute)
		if lock != nil {
			lock.Release()
		}
		answers <- answer{lease, err}
	}()
	got := <-answers
	release()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got.err, context.DeadlineExceeded) {
		t.Fatalf("the take whose deadline passed while queued returned %v, want context.DeadlineExceeded", got.err)
	}
	if got.lease != nil {
		t.Errorf("the take that left the queue unsent named claim %+v for its caller to take back, want none", *got.lease)
	}
}
