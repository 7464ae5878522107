package coordination_test

import (
	"context"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestOnlyOneOfManyConcurrentStartsStartsTheRun is the race run_team had
// when it asked Running and then started the run: of many calls at once,
// exactly one is told it started the run (and may cancel it when its caller
// goes away); every other joins that very run.
func TestOnlyOneOfManyConcurrentStartsStartsTheRun(t *testing.T) {
	gate := make(chan struct{})
	blocking := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return providers.Action{}, providers.Usage{}, context.Cause(ctx)
	})
	models, _, provs := coordtest.Team(t, 2)
	for m := range provs {
		provs[m] = blocking
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})

	const callers = 64
	var (
		mu      sync.Mutex
		starts  = map[*coordination.Run]int{}
		joins   = map[*coordination.Run]int{}
		ready   sync.WaitGroup
		done    sync.WaitGroup
		release = make(chan struct{})
	)
	ready.Add(callers)
	done.Add(callers)
	for range callers {
		go func() {
			defer done.Done()
			ready.Done()
			<-release // all at once
			r, started, err := h.Service.Start(context.Background(), s.ID)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if started {
				starts[r]++
			} else {
				joins[r]++
			}
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()

	if len(starts) != 1 {
		t.Fatalf("%d runs were started by these calls, want exactly 1 (starts %v)", len(starts), starts)
	}
	for r, n := range starts {
		if n != 1 {
			t.Errorf("run %p: %d calls were told they started it, want 1", r, n)
		}
		if joins[r] != callers-1 {
			t.Errorf("run %p: %d calls joined it, want %d", r, joins[r], callers-1)
		}
		r.Cancel()
		<-r.Done()
	}
	close(gate)
	if _, running := h.Service.Running(s.ID); running {
		t.Error("the run is still registered after it ended")
	}
}
