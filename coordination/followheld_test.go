package coordination_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAFollowerWaitsForTheHoldersFinalCall: a run joined from another
// service (another replica) is decided and its holder makes the final
// call; the follower waits for it and returns the final answer. Before, it
// ended at "decided", with no final answer, and told its callers the run
// had finished.
func TestAFollowerWaitsForTheHoldersFinalCall(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	gate, inFinal := make(chan struct{}), make(chan struct{}, 1)
	inner := provs[models[0]]
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose == providers.PurposePresent {
			inFinal <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
				return providers.Action{}, providers.Usage{}, ctx.Err()
			}
			return coordtest.Answer("the final answer"), providers.Usage{}, nil
		}
		return inner.Step(ctx, req)
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	elsewhere := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	ctx := context.Background()
	held, _, err := h.Service.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	followed, err := elsewhere.Follow(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-inFinal
	select {
	case <-followed.Done():
		res, _ := followed.Result()
		t.Fatalf("the follower ended while the holder's final call was pending: %s, final answer %v", res.Status, res.FinalAnswer)
	case <-time.After(1500 * time.Millisecond): // a poll and a half
	}
	close(gate)
	if _, err := held.Result(); err != nil {
		t.Fatal(err)
	}
	res, err := followed.Result()
	if err != nil || res.Status != coordination.StatusFinished || coordination.Deref(res.FinalAnswer) != "the final answer" {
		t.Fatalf("the follower's result: %+v (%v), want finished with the final call's answer", res, err)
	}
}

// ledgerBlipStore is a memory store whose ledger reads find it unreachable while
// down.
type ledgerBlipStore struct {
	*memstore.Store
	down atomic.Bool
}

func (s *ledgerBlipStore) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if s.down.Load() {
		return nil, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.Ledger(ctx, id)
}

func (s *ledgerBlipStore) LendLedger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if s.down.Load() {
		return nil, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.LendLedger(ctx, id)
}

// TestAFollowerWaitsOutAnOutage: the follower's store is unreachable for a
// second and a half while the run goes on elsewhere; the follower waits it
// out, as the holder would, and returns the run's result. Before, it ended
// on its first failed read with the store's error.
func TestAFollowerWaitsOutAnOutage(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	gate := make(chan struct{})
	for m, p := range provs {
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			<-gate
			return p.Step(ctx, req)
		})
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b)}
	bs := &ledgerBlipStore{Store: h.Store}
	elsewhere := coordination.NewService(bs, coordination.Options{Open: h.Open})
	ctx := context.Background()
	held, _, err := h.Service.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elsewhere.Follow(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	bs.down.Store(true)
	time.Sleep(1500 * time.Millisecond)
	bs.down.Store(false)
	close(gate)
	if _, err := held.Result(); err != nil {
		t.Fatal(err)
	}
	<-f.Done()
	if res, err := f.Result(); err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("the follower's result after a 1.5 s outage: %+v (%v), want finished", res, err)
	}
}
