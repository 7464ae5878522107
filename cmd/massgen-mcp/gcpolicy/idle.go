package gcpolicy

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// idleGC collects garbage while every model is thinking. A server's steps
// come in bursts, and the collector's own pacing starts a cycle whenever the
// heap reaches its goal — most often inside a burst, where the cycle takes a
// quarter of the CPU and charges assists to the steps landing. Between
// bursts the process is idle for seconds at a time (the models are working),
// so a cycle run then costs nobody anything, and it sets the next goal from
// a heap that holds every step in flight, far enough away that the bursts
// rarely reach it. At 1,000 concurrent sessions the cycles moved out of the
// waves (GODEBUG=gctrace=1 shows them between), the overhead fell by a few
// tenths of a point and the peak RSS from about 180 to 140 MiB. A process
// that never idles is left to the pacer; one that idles after a burst
// returns its garbage sooner.
var idleGC = &idleCollector{quiet: 100 * time.Millisecond, linger: 10 * time.Second, minGarbage: 16 << 20}

type idleCollector struct {
	quiet      time.Duration // no step started or landed for this long: idle
	linger     time.Duration // idle this long: the watcher stops until the next step
	minGarbage uint64        // collect only when at least this much (and the live heap's size) is garbage

	last     atomic.Int64 // time of the latest step start or landing, as since(epoch): monotonic
	watching atomic.Bool
	off      atomic.Bool  // collect nothing (a test of another collector)
	cycles   atomic.Int64 // cycles this collector ran (for tests)
}

// Busy is the service's activity hook (coordination.Options.OnModelCall):
// a step's model call went out or came back. It records the activity and
// makes sure the idle collector's watcher runs; it never blocks.
func Busy() {
	busyCalls.Add(1)
	idleGC.touch()
}

// busyCalls counts Busy's calls, so that a test of the binary can tell the
// hook is wired into the services it builds.
var busyCalls atomic.Int64

// BusyCalls is how many times Busy has been called in this process.
func BusyCalls() int64 { return busyCalls.Load() }

// touch records activity and makes sure the watcher runs.
func (c *idleCollector) touch() {
	c.last.Store(int64(time.Since(epoch)))
	if !c.watching.Load() && c.watching.CompareAndSwap(false, true) {
		go c.watch()
	}
}

func (c *idleCollector) watch() {
	tick := time.NewTicker(c.quiet / 2)
	defer tick.Stop()
	collected := false
	for range tick.C {
		idle := c.idle()
		switch {
		case idle < c.quiet:
			collected = false
		case !collected && c.worthIt():
			runtime.GC()
			c.cycles.Add(1)
			collected = true
		case idle >= c.linger:
			c.watching.Store(false)
			// A step that touched between the check and the store found
			// the watcher still running and started none: look once more.
			if c.idle() < c.linger && c.watching.CompareAndSwap(false, true) {
				continue
			}
			return
		}
	}
}

// epoch anchors the collector's clock: durations since it are monotonic, so
// a change of the wall clock cannot make a burst look idle.
var epoch = time.Now()

func (c *idleCollector) idle() time.Duration {
	return time.Since(epoch) - time.Duration(c.last.Load())
}

// worthIt tells whether the heap holds enough garbage to collect: at least
// minGarbage, and at least as much as was live after the last cycle. A
// process run with GOGC=off has asked for no collection: none here either.
func (c *idleCollector) worthIt() bool {
	if c.off.Load() {
		return false
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if int64(s[0].Value.Uint64()) < 0 { // GOGC=off reads as -1
		return false
	}
	live, objects := s[1].Value.Uint64(), s[2].Value.Uint64()
	garbage := objects - min(live, objects)
	return garbage >= c.minGarbage && garbage >= live
}
