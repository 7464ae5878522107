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
	lend := func(a *Store, id string) error {
		_, err := a.LendLedger(context.Background(), id)
		return err
	}
	a, ids := lentSessions(b, lend)
	for _, mode := range []string{"one-at-a-time", "all-at-once"} {
		b.Run(mode, func(b *testing.B) {
			cpu0 := processCPU()
			start := time.Now()
			loans := 0
			for b.Loop() {
				if mode == "one-at-a-time" {
					for _, id := range ids {
						if err := lend(a, id); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					lendAllAtOnce(b, a, ids, lend)
				}
				loans += len(ids)
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(loans), "cpu-µs/loan")
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(loans), "wall-µs/loan")
		})
	}
}

// lentSessions is a replica with 500 running sessions, each lent once by
// lend (so their kept state is there), and their ids: the loan
// benchmarks' fleet.
func lentSessions(b *testing.B, lend func(a *Store, id string) error) (*Store, []string) {
	b.Helper()
	a := replicaOn(b, pgtest.Schema(b), Options{})
	ids := make([]string, 500)
	for i := range ids {
		ids[i] = "s" + strconv.Itoa(i)
		if err := a.Create(context.Background(), storetest.NewSession(ids[i])); err != nil {
			b.Fatal(err)
		}
		if err := lend(a, ids[i]); err != nil {
			b.Fatal(err)
		}
	}
	return a, ids
}

// lendAllAtOnce asks for the loans of ids all at once, one goroutine
// each, as requests arriving together do, and returns once all are back.
func lendAllAtOnce(b *testing.B, a *Store, ids []string, lend func(a *Store, id string) error) {
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if err := lend(a, id); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

// processCPU is this process's user and system CPU so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
