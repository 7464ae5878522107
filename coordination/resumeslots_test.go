package coordination_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestResumingInterruptedSessionsTakesRunSlots: the runs a server resumes
// on its own (serve --resume-interrupted, a dead replica's runs) count
// against its limit of running teams as a client's runs do: at the limit
// the rest are left interrupted, for another replica or the next look, and
// a resumed run gives its slot back when it ends. Before, a replica took up
// every run a dead one left, whatever its --max-runs.
func TestResumingInterruptedSessionsTakesRunSlots(t *testing.T) {
	ctx := context.Background()
	raw := memstore.New()
	// Models that answer only once the test is done looking.
	held := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Free(), ctx.Err()
	})
	models := []string{"sim:seed=501", "sim:seed=502"}
	provs := map[string]providers.Provider{}
	for _, m := range models {
		sp, _ := providers.ParseSpec(m)
		provs[sp.String()] = held
	}
	h := &coordtest.Harness{T: t, Providers: provs}
	creator := coordination.NewService(raw, coordination.Options{Open: h.Open})
	var ids []string
	for range 3 {
		s, err := creator.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models})
		if err != nil {
			t.Fatal(err)
		}
		coordtest.RunDied(t, raw, s.ID)
		ids = append(ids, s.ID)
	}
	var mu sync.Mutex
	taken := 0
	slot := func(context.Context) (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		if taken == 1 {
			return nil, errors.New("this server runs 1 team already, its limit (--max-runs)")
		}
		taken++
		var once sync.Once
		return func() {
			once.Do(func() {
				mu.Lock()
				defer mu.Unlock()
				taken--
			})
		}, nil
	}
	svc := coordination.NewService(raw, coordination.Options{Parallel: 2, Open: h.Open})
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	resumed, err := svc.ResumeInterrupted(ctx, slot)
	if !errors.Is(err, coordination.ErrAtRunLimit) || len(resumed) != 1 {
		t.Fatalf("at a limit of one run, ResumeInterrupted = %v, %v; want one session resumed, the rest left at the limit", resumed, err)
	}
	if again, err := svc.ResumeInterrupted(ctx, slot); !errors.Is(err, coordination.ErrAtRunLimit) || len(again) != 0 {
		t.Errorf("a look while at the limit = %v, %v; want nothing resumed, ErrAtRunLimit", again, err)
	}
	for _, id := range ids {
		if id == resumed[0] {
			continue
		}
		if v, err := svc.Status(ctx, id); err != nil || v.Result.Status != coordination.StatusInterrupted {
			t.Errorf("session %s past the limit reads %+v, %v; want it left interrupted", id, v, err)
		}
	}
	r, ok := svc.Running(resumed[0])
	if !ok {
		t.Fatalf("the resumed session %s is not running here", resumed[0])
	}
	r.Cancel()
	<-r.Done()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := taken
		mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the resumed run ended and kept its slot")
		}
		time.Sleep(5 * time.Millisecond)
	}
	next, err := svc.ResumeInterrupted(ctx, slot)
	if !errors.Is(err, coordination.ErrAtRunLimit) || len(next) != 1 || next[0] == resumed[0] {
		t.Errorf("with its slot back, ResumeInterrupted = %v, %v; want one more of the sessions left", next, err)
	}
	for _, id := range next {
		if r, ok := svc.Running(id); ok {
			r.Cancel()
			<-r.Done()
		}
	}
}
