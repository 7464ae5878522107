package benchmark

import (
	"context"
	"testing"
	"time"
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
