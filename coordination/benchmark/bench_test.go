package benchmark

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/gcpolicy"
	"github.com/massgen-go/massgen-mcp/providers/sim/itemmodel"
)

// The per-step overhead and the 4-agent run against the parallel ideal have
// their Go benchmarks beside the engine (coordination/bench_test.go); these
// are the rest of `massgen-bench overhead`, each reporting ratios or
// rates measured in the same run. `go test -run '^$' -bench . -benchtime 1x
// ./coordination/benchmark/` runs each once.

// BenchmarkSequentialVsParallel compares the same 4-agent team at 200 ms
// consulted one model at a time (as some consensus MCP servers do) with our
// parallel run loop, seed by seed.
func BenchmarkSequentialVsParallel(b *testing.B) {
	for b.Loop() {
		c, err := Overhead{}.CompareRuns(context.Background(), 4, 3, 200*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(c.Sequential, "sequential/ours")
		b.ReportMetric(c.VsIdeal, "ours/ideal")
	}
}

// BenchmarkThousandSessions runs 1,000 concurrent sessions of 4 sim agents
// at 1 s latency in this process on the memory store, after one untimed
// batch (a warm process, as a serving one is), with the binary's collector
// setting. Targets: overhead against the ideal ≤ 2 %, peak RSS < 1 GiB.
func BenchmarkThousandSessions(b *testing.B) {
	o, restore := serverGC(b)
	defer restore()
	if err := o.WarmUp(context.Background(), 1000, 4); err != nil {
		b.Fatal(err)
	}
	var runs []ManySessions
	for b.Loop() {
		runs = append(runs, runMany(b, o))
	}
	reportMany(b, runs)
}

// BenchmarkThousandSessionsCold is BenchmarkThousandSessions without the
// warm-up: the first batch of a process. Run it alone (-bench
// ThousandSessionsCold -benchtime 1x) for a process that is really cold.
func BenchmarkThousandSessionsCold(b *testing.B) {
	o, restore := serverGC(b)
	defer restore()
	var runs []ManySessions
	for b.Loop() {
		runs = append(runs, runMany(b, o))
	}
	reportMany(b, runs)
}

// serverGC applies the binary's collector setting for a benchmark and
// returns the harness that runs under it.
func serverGC(b *testing.B) (o Overhead, restore func()) {
	before := debug.SetGCPercent(100)
	debug.SetGCPercent(before)
	b.Log(gcpolicy.Tune())
	return Overhead{OnModelCall: gcpolicy.Busy}, func() { debug.SetGCPercent(before) }
}

func runMany(b *testing.B, o Overhead) ManySessions {
	m, err := o.RunManySessions(context.Background(), 1000, 4, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// reportMany reports the median of each measure over the runs (-benchtime
// Nx: N runs), each run's overhead logged.
func reportMany(b *testing.B, runs []ManySessions) {
	med := func(f func(m ManySessions) float64) float64 {
		xs := make([]float64, len(runs))
		for i, m := range runs {
			xs[i] = f(m)
		}
		return medianF(xs)
	}
	for i, m := range runs {
		b.Logf("run %d: overhead %.2f %%, last first step %v, p99 late %v", i+1, 100*m.Overhead, m.LastLaunch, m.LateP99)
	}
	b.ReportMetric(med(func(m ManySessions) float64 { return 100 * m.Overhead }), "overhead-%")
	b.ReportMetric(med(func(m ManySessions) float64 { return 100 * m.SessionOverhead }), "session-overhead-%")
	b.ReportMetric(med(func(m ManySessions) float64 { return float64(m.PeakRSS) / (1 << 20) }), "peak-RSS-MiB")
	b.ReportMetric(med(func(m ManySessions) float64 { return float64(m.BytesPerSession) }), "bytes/session")
	b.ReportMetric(med(func(m ManySessions) float64 { return float64(m.CPU.Microseconds()) / float64(m.Steps) }), "cpu-µs/step")
	b.ReportMetric(med(func(m ManySessions) float64 { return float64(m.LastLaunch.Milliseconds()) }), "last-launch-ms")
	b.ReportMetric(med(func(m ManySessions) float64 { return float64(m.LateP99.Milliseconds()) }), "late-p99-ms")
}

// BenchmarkFileStoreStepsPerSecond drives the file store (on the test's
// temp dir) with 8 zero-latency sessions at once for 3 s.
func BenchmarkFileStoreStepsPerSecond(b *testing.B) {
	for b.Loop() {
		store, done, err := Stores(b.TempDir())[StoreFile]()
		if err != nil {
			b.Fatal(err)
		}
		t, err := Overhead{}.StoreThroughput(context.Background(), store, 8, 3*time.Second)
		done()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(t.StepsPerSecond, "steps/s")
	}
}

// BenchmarkQuality is the default quality comparison at 300 items: ours
// against the best single agent and the round-0 vote, and what early stop
// saves.
func BenchmarkQuality(b *testing.B) {
	for b.Loop() {
		rep, err := Quality(context.Background(), QualityConfig{Items: 300, Seed: 1, Model: itemmodel.DefaultConfig(), Behaviour: DefaultBehaviour(),
			Protocols: []string{ProtoSingle, ProtoVote, ProtoOurs, ProtoOursEarly}})
		if err != nil {
			b.Fatal(err)
		}
		ours, _ := rep.Row(ProtoOurs)
		early, _ := rep.Row(ProtoOursEarly)
		b.ReportMetric(100*ours.VsSingle, "ours-vs-single-pt")
		b.ReportMetric(100*ours.VsVote, "ours-vs-vote-pt")
		b.ReportMetric(early.Cost/ours.Cost, "early/ours-cost")
	}
}
