package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// runLockDownStore is a memory store whose run lock is unreachable while
// down is set: an outage that begins after a run has started.
type runLockDownStore struct {
	*memstore.Store
	down atomic.Bool
}

func (s *runLockDownStore) LockRun(ctx context.Context, id string) (func(), error) {
	if s.down.Load() {
		return nil, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.LockRun(ctx, id)
}

// TestAFinalizeThatMeetsAnOutageLeavesTheRunInterrupted: Finalize stops the
// session's run, then finds the store unreachable and gives up. Nothing
// runs the session any more, so it must read interrupted once its lease
// has expired (a replica resuming those takes it up), not running. Before,
// the stopped run released its lease and the session read running for
// ever, with nothing running it.
func TestAFinalizeThatMeetsAnOutageLeavesTheRunInterrupted(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	calling := make(chan struct{}, 4)
	for _, m := range models {
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			calling <- struct{}{}
			<-ctx.Done()
			return providers.Action{}, providers.Usage{}, ctx.Err()
		})
	}
	st := &runLockDownStore{Store: memstore.New()}
	h := &coordtest.Harness{T: t, Providers: provs}
	h.Service = coordination.NewService(st, coordination.Options{Open: h.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond})
	s := h.Create(coordination.TeamSpec{Models: models})
	ctx := context.Background()
	if _, _, err := h.Service.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	<-calling
	st.down.Store(true)
	if _, err := h.Service.Finalize(ctx, s.ID, ""); !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("Finalize over an unreachable run lock = %v, want the outage", err)
	}
	st.down.Store(false)
	untilStatus(t, h.Service, s.ID, coordination.StatusInterrupted, "after its run was stopped and its finalize gave up")
	// finalize_team again, the store back, finishes it.
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatalf("Finalize again: %v", err)
	}
	t.Logf("finalized again: %s (%s)", res.Status, res.FinalNote)
	v, err := h.Service.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status == coordination.StatusInterrupted || v.Result.Status == coordination.StatusRunning {
		t.Fatalf("the session reads %s after a finalize that succeeded", v.Result.Status)
	}
}
