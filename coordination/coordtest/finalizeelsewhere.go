package coordtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// FinalizeElsewhere plays finalize_team reaching a process other than the
// one running the session (a load balancer's choice): a team runs on a
// service over a; both agents have answered and their next calls are
// pending; Finalize through a service over b (a store of the same record:
// another process on the state directory, another replica) records the
// decision, the run on a hears it, stops its calls and writes the final
// answer, and Finalize on b returns that finished result. Before, b was
// refused: the session is being run elsewhere.
func FinalizeElsewhere(t *testing.T, a, b coordination.Store) {
	for _, final := range []coordination.FinalStrategy{coordination.FinalWinner, coordination.FinalPresent} {
		t.Run(string(final), func(t *testing.T) { finalizeElsewhere(t, a, b, final) })
	}
}

func finalizeElsewhere(t *testing.T, a, b coordination.Store, final coordination.FinalStrategy) {
	ctx := context.Background()
	models, _, provs := Team(t, 2)
	answered, stopped := make(chan struct{}, 2), make(chan struct{}, 4)
	var presentedBy atomic.Value // the service whose model made the final call
	presentedBy.Store("")
	for _, m := range models {
		var calls atomic.Int32
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose == providers.PurposePresent {
				presentedBy.Store(ctx.Value(serviceKey{}))
				return Answer("FINAL"), providers.Usage{}, nil
			}
			if calls.Add(1) == 1 {
				answered <- struct{}{}
				return Answer("4 from " + req.AgentID), providers.Usage{}, nil
			}
			<-ctx.Done() // a vote that never comes
			stopped <- struct{}{}
			return providers.Action{}, providers.Usage{}, ctx.Err()
		})
	}
	h := &Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(a, coordination.Options{Open: h.Open})
	s := h.Create(coordination.TeamSpec{Models: models})
	r, _, err := h.Service.Start(context.WithValue(ctx, serviceKey{}, "holder"), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Cancel()
	wait(t, answered, "agent_a's answer")
	wait(t, answered, "agent_b's answer")
	// Both answers landed (the second landing may still be settling): the
	// agents' next calls are what the run waits on.
	deadline := time.Now().Add(10 * time.Second)
	for entries(t, a, s.ID) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the two answers did not land within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	other := coordination.NewService(b, coordination.Options{Open: h.Open})
	fctx, cancel := context.WithTimeout(context.WithValue(ctx, serviceKey{}, "other"), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := other.Finalize(fctx, s.ID, final)
	if err != nil {
		t.Fatalf("Finalize through another process: %v", err)
	}
	t.Logf("finalized through the other process in %v: %s", time.Since(t0).Round(time.Millisecond), status(res))
	if res.Status != coordination.StatusFinished || res.Winner == nil || res.FinalAnswer == nil || *res.FinalAnswer == "" {
		t.Fatalf("Finalize through another process returned %s, winner %v; want finished with the winner's answer", status(res), res.Winner)
	}
	if final == coordination.FinalPresent && (*res.FinalAnswer != "FINAL" || presentedBy.Load() != "holder") {
		t.Errorf("final answer %q presented by %q; want the holder's final call", *res.FinalAnswer, presentedBy.Load())
	}
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run still ran 10 s after it was finalized elsewhere")
	}
	own, err := r.Result()
	if err != nil {
		t.Fatalf("the run's end: %v", err)
	}
	// The holder wrote the end (it holds the steps and the files), not the
	// process that asked.
	if own.Status != coordination.StatusFinished || own.FinalAnswer == nil || *own.FinalAnswer != *res.FinalAnswer {
		t.Errorf("the run ended %s, not with the final answer the finalize returned (%q)", status(own), *res.FinalAnswer)
	}
}

// serviceKey marks which service's context a model call runs under.
type serviceKey struct{}
