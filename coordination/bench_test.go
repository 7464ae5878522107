package coordination_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/benchmark"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// benchStores are the stores the benchmarks compare. The file store runs on
// the test's temp dir (a real disk here) and, when there is one, on tmpfs,
// where fsync costs nothing: the difference is what durability costs.
func benchStores(b *testing.B) map[string]func() coordination.Store {
	stores := map[string]func() coordination.Store{
		"memory": func() coordination.Store { return memstore.New() },
		"file":   func() coordination.Store { return filestore.New(b.TempDir()) },
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		stores["file-tmpfs"] = func() coordination.Store {
			dir, err := os.MkdirTemp("/dev/shm", "massgen-bench-")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			return filestore.New(dir)
		}
	}
	return stores
}

// BenchmarkStepOverhead measures one server step with a zero-latency sim
// agent: everything but the model — locks, ledger reads, derivation, the
// entry, deciding, status.json. It reports the median per step.
func BenchmarkStepOverhead(b *testing.B) {
	for _, name := range []string{"memory", "file", "file-tmpfs"} {
		open, ok := benchStores(b)[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			svc := coordination.NewService(open(), coordination.Options{Open: backends.Open})
			var durations []time.Duration
			var sess *coordination.Session
			newSession := func() {
				seed := int64(len(durations))
				var err error
				sess, err = svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Driver: coordination.DriverStep,
					Models: []string{"sim/strong", "sim/strong", "sim/strong", "sim/strong"}, Seed: &seed,
					Rules: coordination.Rules{MaxRounds: 20}})
				if err != nil {
					b.Fatal(err)
				}
			}
			newSession()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st, err := svc.Status(ctx, sess.ID)
				if err != nil {
					b.Fatal(err)
				}
				if len(st.Result.NextAgents) == 0 {
					b.StopTimer()
					newSession()
					b.StartTimer()
					st, _ = svc.Status(ctx, sess.ID)
				}
				agent := st.Result.NextAgents[0]
				start := time.Now()
				if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: sess.ID, AgentID: agent}); err != nil {
					b.Fatal(err)
				}
				durations = append(durations, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(durations)
			b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "median-ms/step")
		})
	}
}

// BenchmarkParallelRunVsIdeal runs 4 sim agents at a fixed latency and
// compares the wall time with the parallel ideal: rounds × latency, where a
// round is a wave of steps that start together (with zero overhead every step
// would start at a multiple of the latency, as soon as it is due).
func BenchmarkParallelRunVsIdeal(b *testing.B) {
	const latency = 200 * time.Millisecond
	for _, name := range []string{"memory", "file"} {
		open := benchStores(b)[name]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			var ratios []float64
			for i := 0; i < b.N; i++ {
				store := open()
				svc := coordination.NewService(store, coordination.Options{Open: backends.Open})
				seed := int64(i + 1)
				m := fmt.Sprintf("sim/strong:latency=%s", latency)
				s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{m, m, m, m}, Seed: &seed})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := svc.Run(ctx, s.ID, nil); err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start)
				l, _ := store.Ledger(ctx, s.ID)
				rounds := benchmark.Waves(l, latency)
				ratios = append(ratios, wall.Seconds()/(float64(rounds)*latency.Seconds()))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "median-wall/ideal")
			b.ReportMetric(ratios[len(ratios)-1], "max-wall/ideal")
		})
	}
}
