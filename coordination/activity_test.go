package coordination_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func TestStreamedTextReachesTheWatcherAndNeverTheLedger(t *testing.T) {
	run := func(watch func(coordination.Activity)) (*coordination.Ledger, *coordination.TeamResult) {
		ctx := context.Background()
		svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Parallel: 1, Logger: zerolog.Nop()})
		seed := int64(3)
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Seed: &seed,
			Models: []string{"sim/strong:latency=40ms", "sim:latency=40ms", "sim/weak:latency=40ms"}})
		if err != nil {
			t.Fatal(err)
		}
		if watch != nil {
			sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{s.ID}, Kinds: []coordination.ObservationKind{coordination.ObservedActivity}})
			if err != nil {
				t.Fatal(err)
			}
			read := make(chan struct{})
			go func() {
				defer close(read)
				for range sub.Ready() {
					for _, o := range sub.Take() {
						watch(*o.Activity)
					}
				}
			}()
			defer func() { sub.Close(); <-read }()
		}
		res, err := svc.Run(ctx, s.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, err := svc.Store().Ledger(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return l, res
	}
	var mu sync.Mutex
	got := map[string]string{}
	watched, res := run(func(a coordination.Activity) {
		mu.Lock()
		defer mu.Unlock()
		if a.Kind == "text" && a.Step > 0 && a.SessionID != "" {
			got[a.Agent] += a.Text
		}
	})
	plain, _ := run(nil)
	if len(got) != 3 {
		t.Fatalf("every agent's streamed text should reach the watcher, got %v", got)
	}
	if want := *res.FinalAnswer; len(want) == 0 || !strings.Contains(got[res.Winner.AgentID], "391") {
		t.Fatalf("the winner streamed %q", got[res.Winner.AgentID])
	}
	if coordtest.JSON(stripTimes(watched)) != coordtest.JSON(stripTimes(plain)) {
		t.Fatalf("watching changed the ledger:\n%s\n%s", coordtest.JSON(stripTimes(watched)), coordtest.JSON(stripTimes(plain)))
	}
}

// stripTimes keeps what a ledger says, not when.
func stripTimes(l *coordination.Ledger) map[string][]coordination.Entry {
	out := map[string][]coordination.Entry{}
	for id, es := range l.Agents {
		for _, e := range es {
			e.Time, e.DurationSeconds = time.Time{}, 0
			out[id] = append(out[id], e)
		}
	}
	return out
}

// TestModelCallHookBracketsEveryModelCall: the process's activity hook is
// called as each server step's model call goes out and again as it comes
// back, so a policy hung on it (cmd's idle collector) sees the process busy
// exactly while no model is thinking.
func TestModelCallHookBracketsEveryModelCall(t *testing.T) {
	var mu sync.Mutex
	calls, inModel, odd := 0, 0, 0
	svc := coordination.NewService(memstore.New(), coordination.Options{
		Open: func(sp providers.Spec) (providers.Provider, error) {
			return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				mu.Lock()
				inModel++
				if calls%2 == 1 {
					odd++ // the hook reported the call going out before the model saw it
				}
				mu.Unlock()
				return coordtest.Answer("4"), providers.Usage{}, nil
			}), nil
		},
		Parallel:    1,
		Logger:      zerolog.Nop(),
		OnModelCall: func() { mu.Lock(); calls++; mu.Unlock() },
	})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Agents {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: a.ID}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if inModel != 2 || calls != 4 || odd != 2 {
		t.Fatalf("2 model calls: hook called %d times (want 4), %d of the calls found it called once more than returned (want 2)", calls, odd)
	}
}
