package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// BenchmarkStatusTimeline is what a status poll's timeline costs this
// process and the wall for a session of 2,000 events, read whole and cut
// to the latest 100 (as before EventTail) and read as the latest 100 and a
// count (EventTail), in the same run. Read the ratio of the two.
func BenchmarkStatusTimeline(b *testing.B) {
	a := replicaOn(b, pgtest.Schema(b), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		ev := coordination.Event{Time: time.Now(), Type: "step_landed", Agent: "agent_a", Step: i, Message: "agent_a landed an answer (agent1.3) after 41.2 s", Data: map[string]any{"label": "agent1.3", "tokens": 1234.0}}
		if err := a.AppendEvent(ctx, "s", ev); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"whole", "tail"} {
		b.Run(mode, func(b *testing.B) {
			cpu0 := processCPU()
			start := time.Now()
			polls := 0
			for b.Loop() {
				var evs []coordination.Event
				var err error
				if mode == "whole" {
					evs, err = a.Events(ctx, "s")
					evs = evs[len(evs)-100:]
				} else {
					evs, _, err = a.EventTail(ctx, "s", 100)
				}
				if err != nil || len(evs) != 100 {
					b.Fatalf("%d events, %v", len(evs), err)
				}
				polls++
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(polls), "cpu-µs/poll")
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(polls), "wall-µs/poll")
		})
	}
}
