package pgstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// BenchmarkLoansWithEntriesInDoubt is what the entries in doubt
// (unheard.go) cost the hot read path, 500 running sessions' loans asked
// for all at once: with none in doubt, and with unheardMax in doubt of
// sessions not read (writes an outage cut before their COMMIT, which no
// read will ever find). Read the ratio of the two.
func BenchmarkLoansWithEntriesInDoubt(b *testing.B) {
	lend := func(a *Store, id string) error {
		_, _, _, err := a.LendState(context.Background(), id)
		return err
	}
	a, ids := lentSessions(b, lend)
	for _, n := range []int{0, unheardMax} {
		b.Run("in-doubt="+strconv.Itoa(n), func(b *testing.B) {
			a.db.unheard = unheard{}
			for i := range n {
				a.db.unheard.add(doubted{tenant: a.tenant, id: "gone" + strconv.Itoa(i), kind: coordination.SessionCancelled, at: time.Now()})
			}
			cpu0 := processCPU()
			loans := 0
			for b.Loop() {
				lendAllAtOnce(b, a, ids, lend)
				loans += len(ids)
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(loans), "cpu-µs/loan")
		})
	}
}
