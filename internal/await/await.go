package await

import (
	"fmt"
	"testing"
	"time"
)

// Slow bounds a wait for readiness: a node CLI started beside CI's race
// builds took more than 30 s to make its first API call (load 28 on two
// cores), and nothing measured here is the wait's length.
const Slow = 90 * time.Second

// Until polls ready until it holds and fails t if limit passes first, or at
// once if ended yields first: what was being waited on (a step, a process)
// ended without ever becoming ready, and its error says why. ended may be
// nil; it is a step's error or a process's exit (a closed channel of
// struct{}). A value read from ended is not given back: Until fails the
// test then.
func Until[E any](t testing.TB, what string, limit time.Duration, ready func() bool, ended <-chan E) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for !ready() {
		select {
		case v := <-ended:
			if ready() { // it became ready as it ended: a process that exits once it has written what is awaited
				return
			}
			t.Fatalf("%s: it ended first, after %v%s", what, time.Since(start).Round(time.Millisecond), because(v))
		case <-deadline.C:
			t.Fatalf("%s: not within %v", what, limit)
		case <-tick.C:
		}
	}
}

// because is what an end said: a step's error, or nothing for a process's
// closed channel.
func because(v any) string {
	if _, ok := v.(struct{}); ok {
		return ""
	}
	return fmt.Sprintf(" (%v)", v)
}
