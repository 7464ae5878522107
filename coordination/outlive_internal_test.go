package coordination

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOutliveGoesOnForItsGraceAfterItsParentEnds: a host's landing outlives
// its request by the grace, no more, and ends with the request's cause;
// while the request lives, so does the landing, however long; done ends it.
func TestOutliveGoesOnForItsGraceAfterItsParentEnds(t *testing.T) {
	gone := errors.New("the client gave up")
	parent, end := context.WithCancelCause(context.Background())
	out, done := outlive(parent, 50*time.Millisecond)
	defer done()
	time.Sleep(100 * time.Millisecond) // longer than the grace, the parent alive
	if out.Err() != nil {
		t.Fatalf("ended while its parent lived: %v", out.Err())
	}
	ended := time.Now()
	end(gone)
	time.Sleep(20 * time.Millisecond)
	// Ended before the grace had passed, by the clock: a loaded machine can
	// oversleep the 20 ms past the 50 ms grace, when an end is due. A
	// landing that ended with its parent is caught whenever the sleep keeps
	// to the grace.
	if err := out.Err(); err != nil && time.Since(ended) < 50*time.Millisecond {
		t.Fatalf("ended within the grace after its parent: %v", err)
	}
	select {
	case <-out.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("never ended after its parent plus the grace")
	}
	if !errors.Is(context.Cause(out), gone) {
		t.Errorf("ended with %v; want the parent's cause", context.Cause(out))
	}

	out2, done2 := outlive(context.Background(), time.Hour)
	done2()
	if out2.Err() == nil {
		t.Error("done did not end it")
	}
}
