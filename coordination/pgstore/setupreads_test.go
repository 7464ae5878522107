package pgstore

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestRunsReadTheirSetupsOnceEach: a run reads its session's setup once,
// at its start under the run lock; its end derives from the setup it
// holds (final since its first step) instead of reading it again after
// its last derivation let the kept one go (an ended session's is not
// kept). At 1,000 sessions that second read was 0.12 round trips a step.
func TestRunsReadTheirSetupsOnceEach(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	const runs = 3
	steps := 0
	setups0 := setupReads(c)
	for i := range runs {
		seed := int64(i + 1)
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim", "sim", "sim"}, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Run(ctx, s.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		steps += res.Steps
	}
	if n := setupReads(c) - setups0; n != runs {
		t.Errorf("%d runs of %d steps in all read their setups %d times, want %d (once each, at its start)", runs, steps, n, runs)
	}
}
