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
	// When it ended, by the clock, not whether it had after a fixed sleep
	// (a loaded machine oversleeps): an end sooner than the grace after
	// its parent's, however the goroutines were scheduled, is a landing
	// cut short.
	select {
	case <-out.Done():
		if d := time.Since(ended); d < 50*time.Millisecond {
			t.Fatalf("ended %v after its parent, within the 50ms grace: %v", d, out.Err())
		}
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
