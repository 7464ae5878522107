package pgstore

import (
	"context"
	"testing"
)

// TestAPingAnswersForTheDatabaseNotForItsAsker: a health probe that hangs
// up mid-ping (its context cancelled) does not leave "context canceled"
// standing as every other probe's answer for the next second.
func TestAPingAnswersForTheDatabaseNotForItsAsker(t *testing.T) {
	st := replicas(t, 1)[0]
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.Ping(gone); err != nil {
		t.Errorf("a ping for a probe that hung up, database up: %v", err)
	}
	if err := st.Ping(context.Background()); err != nil {
		t.Errorf("the next health check, database up: %v", err)
	}
}
