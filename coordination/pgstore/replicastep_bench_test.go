package pgstore_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/benchmark"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// BenchmarkReplicaSteps is what a sim step costs the replicas' process on
// PostgreSQL, counted: 20 sessions of 4 sim agents at 20 ms over two
// replicas of one schema, as massgen-bench overhead --pg-sessions runs
// them, reported as objects and bytes allocated a step. Those counts move
// little run to run where this shared machine's timings move ±12 %
// (BENCHMARKS.md, the thirty-second stop), so compare builds by them.
func BenchmarkReplicaSteps(b *testing.B) {
	dsn := pgtest.Schema(b)
	ctx := context.Background()
	var stores []coordination.Store
	for range 2 {
		db, err := pgstore.Open(ctx, dsn, pgstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(db.Close)
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			b.Fatal(err)
		}
		stores = append(stores, st)
	}
	var o benchmark.Overhead
	// One untimed batch: the statements prepared, the pools filled.
	if _, err := o.RunManySessionsOn(ctx, stores, 20, 4, 20*time.Millisecond); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	steps := 0
	for b.Loop() {
		m, err := o.RunManySessionsOn(ctx, stores, 20, 4, 20*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		steps += m.Steps
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(steps), "allocs/step")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(steps), "B/step")
}
