package pgstore

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// BenchmarkLoansWithEntriesInDoubt is what the entries in doubt
// (unheard.go) cost the hot read path, 500 running sessions' loans asked
// for all at once: with none in doubt, and with unheardMax in doubt of
// sessions not read (writes an outage cut before their COMMIT, which no
// read will ever find). Read the ratio of the two.
func BenchmarkLoansWithEntriesInDoubt(b *testing.B) {
	a := replicaOn(b, pgtest.Schema(b), Options{})
	ctx := context.Background()
	const sessions = 500
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = "s" + strconv.Itoa(i)
		if err := a.Create(ctx, storetest.NewSession(ids[i])); err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := a.LendState(ctx, ids[i]); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{0, unheardMax} {
		b.Run("in-doubt="+strconv.Itoa(n), func(b *testing.B) {
			a.db.unheard = unheard{}
			for i := range n {
				a.db.unheard.add(doubted{tenant: a.tenant, id: "gone" + strconv.Itoa(i), kind: coordination.SessionCancelled, at: time.Now()})
			}
			cpu0 := processCPU()
			loans := 0
			for b.Loop() {
				var wg sync.WaitGroup
				for _, id := range ids {
					wg.Go(func() {
						if _, _, _, err := a.LendState(ctx, id); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				loans += sessions
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(loans), "cpu-µs/loan")
		})
	}
}
