package benchmark

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// TestManySessionsMeasuresTheStartAndTheLateSteps: the concurrent-sessions
// measurement reports when the last session's first step began and how late
// steps landed, within what the run allows.
func TestManySessionsMeasuresTheStartAndTheLateSteps(t *testing.T) {
	const latency = 50 * time.Millisecond
	m, err := Overhead{}.RunManySessions(context.Background(), 20, 4, latency)
	if err != nil {
		t.Fatal(err)
	}
	if m.LastLaunch <= 0 || m.LastLaunch >= m.Wall {
		t.Errorf("the last first step starts after the first Start and within the run: %v of %v", m.LastLaunch, m.Wall)
	}
	if m.LateP99 < 0 || m.LateP99 >= m.Wall {
		t.Errorf("a step takes at least the latency and lands within the run: p99 %v late", m.LateP99)
	}
	if m.Steps < 20*4 || m.Overhead <= -1 {
		t.Errorf("every session stepped every agent: %d steps, overhead %v", m.Steps, m.Overhead)
	}
}

// slowRuns is a memory store whose run lock costs what a database's round
// trips do, and which records the most LockRun calls it saw at once.
type slowRuns struct {
	*memstore.Store
	wait             time.Duration
	inFlight, widest *atomic.Int64
}

func newSlowRuns(wait time.Duration) slowRuns {
	return slowRuns{Store: memstore.New(), wait: wait, inFlight: new(atomic.Int64), widest: new(atomic.Int64)}
}

func (s slowRuns) LockRun(ctx context.Context, id string) (func(), error) {
	now := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for w := s.widest.Load(); now > w && !s.widest.CompareAndSwap(w, now); w = s.widest.Load() {
	}
	time.Sleep(s.wait)
	return s.Store.LockRun(ctx, id)
}

// TestManySessionsStartTogether: sessions are started as many clients
// would start them, not one after another, so a store whose Start takes
// round trips does not turn the wall into the launch loop's. It counts
// rather than times, so a loaded machine cannot fail it: the starts' run
// locks overlap, many at once, where a launch loop would take them one at a
// time. Each lock waits 40 ms, long enough that the start workers meet in it
// however the scheduler lets them in.
func TestManySessionsStartTogether(t *testing.T) {
	const n, wait = 64, 40 * time.Millisecond
	store := newSlowRuns(wait)
	if _, err := (Overhead{}).RunManySessionsOn(context.Background(), []coordination.Store{store}, n, 2, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// A fixed bar, not one derived from startWorkers, so that shrinking the
	// workers to a loop fails here; 8 leaves room for a starved scheduler.
	if widest, want := store.widest.Load(), int64(8); widest < want {
		t.Errorf("at most %d of %d sessions' starts took their run locks at once, want at least %d: are the sessions started one after another?", widest, n, want)
	}
}
