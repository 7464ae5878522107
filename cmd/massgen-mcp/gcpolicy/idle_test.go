package gcpolicy

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var sink [][]byte

// garbage allocates n bytes and drops them.
func garbage(n int) {
	for range n >> 16 {
		sink = append(sink, make([]byte, 1<<16))
	}
	sink = nil
}

// TestIdleCollectorCollectsOnlyWhenIdleAndWorthIt: no cycle while steps keep
// starting and landing; one once they stop, if there is garbage to collect;
// none without garbage; and the watcher stops after lingering.
func TestIdleCollectorCollectsOnlyWhenIdleAndWorthIt(t *testing.T) {
	before := debug.SetGCPercent(10000) // the pacer stays out of the way
	defer debug.SetGCPercent(before)
	idleGC.off.Store(true) // and so does the process's collector, if an earlier test woke it
	defer idleGC.off.Store(false)
	runtime.GC()
	// quiet is long against the 2 ms between steps below, so that a loaded
	// machine oversleeping a step does not look idle.
	c := &idleCollector{quiet: 150 * time.Millisecond, linger: 600 * time.Millisecond, minGarbage: 1 << 20}

	// Busy: a step every few milliseconds, with garbage piling up.
	garbage(8 << 20)
	for end := time.Now().Add(3 * c.quiet); time.Now().Before(end); {
		c.touch()
		time.Sleep(2 * time.Millisecond)
	}
	if n := c.cycles.Load(); n != 0 {
		t.Fatalf("collected %d times while steps kept landing", n)
	}
	waitFor(t, func() bool { return c.cycles.Load() == 1 }, "one cycle once idle")

	// Idle again with nothing new to collect: no second cycle.
	c.touch()
	time.Sleep(3 * c.quiet)
	if n := c.cycles.Load(); n != 1 {
		t.Fatalf("collected again with no garbage: %d cycles", n)
	}
	waitFor(t, func() bool { return !c.watching.Load() }, "the watcher stops after lingering")

	// GOGC=off: the process asked for no collection.
	debug.SetGCPercent(-1)
	garbage(8 << 20)
	c.touch()
	time.Sleep(3 * c.quiet)
	if n := c.cycles.Load(); n != 1 {
		t.Fatalf("collected under GOGC=off: %d cycles", n)
	}
	// The collection is process-wide: leave no watcher to collect another
	// test's garbage.
	waitFor(t, func() bool { return !c.watching.Load() }, "the watcher stops")
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
