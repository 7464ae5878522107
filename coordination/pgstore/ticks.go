package pgstore

import (
	"context"
	"time"
)

// every calls fn each d until ctx ends: the shape of the replica's
// background work (the lock heartbeat, the beats, the looks for dead
// replicas), which each had its own ticker loop.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
