package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

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
