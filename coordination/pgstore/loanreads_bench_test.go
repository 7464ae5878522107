package pgstore

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// BenchmarkLoans is what a loan costs this process and the wall, of 500
// running sessions' kept ledgers: asked for one at a time (each its own
// round trip) and all at once (grouped, loanreads.go), in the same run.
// Read the ratio of the two; PostgreSQL's own CPU falls with the round
// trips too (BENCHMARKS.md has it measured from /proc).
func BenchmarkLoans(b *testing.B) {
	a := replicaOn(b, pgtest.Schema(b), Options{})
	ctx := context.Background()
	const sessions = 500
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = "s" + strconv.Itoa(i)
		if err := a.Create(ctx, storetest.NewSession(ids[i])); err != nil {
			b.Fatal(err)
		}
		if _, err := a.LendLedger(ctx, ids[i]); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"one-at-a-time", "all-at-once"} {
		b.Run(mode, func(b *testing.B) {
			cpu0 := processCPU()
			start := time.Now()
			loans := 0
			for b.Loop() {
				if mode == "one-at-a-time" {
					for _, id := range ids {
						if _, err := a.LendLedger(ctx, id); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					var wg sync.WaitGroup
					for _, id := range ids {
						wg.Go(func() {
							if _, err := a.LendLedger(ctx, id); err != nil {
								b.Error(err)
							}
						})
					}
					wg.Wait()
				}
				loans += sessions
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(loans), "cpu-µs/loan")
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(loans), "wall-µs/loan")
		})
	}
}

// processCPU is this process's user and system CPU so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
