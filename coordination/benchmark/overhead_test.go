package benchmark

import (
	"context"
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
// trips do.
type slowRuns struct {
	*memstore.Store
	wait time.Duration
}

func (s slowRuns) LockRun(ctx context.Context, id string) (func(), error) {
	time.Sleep(s.wait)
	return s.Store.LockRun(ctx, id)
}

// TestManySessionsStartTogether: sessions are started as many clients
// would start them, not one after another, so a store whose Start takes
// round trips does not turn the wall into the launch loop's: 64 starts of
// 40 ms each launch the last well before 64 × 40 ms.
func TestManySessionsStartTogether(t *testing.T) {
	const n, wait = 64, 40 * time.Millisecond
	m, err := Overhead{}.RunManySessionsOn(context.Background(), []coordination.Store{slowRuns{memstore.New(), wait}}, n, 2, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if serial := n * wait; m.LastLaunch >= serial/4 {
		t.Errorf("the last of %d sessions began %v after the first Start; one after another would be %v, want under a quarter of it", n, m.LastLaunch, serial)
	}
}
