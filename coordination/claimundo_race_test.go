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

// undoRaceStore fails one AcquireRun as an outage (nothing written), and
// runs hook right after that failed claim lets its run lock go.
type undoRaceStore struct {
	*memstore.Store
	failAcquire atomic.Bool
	armed       atomic.Bool
	readsDown   atomic.Int32
	hook        func()
}

func (s *undoRaceStore) AcquireRun(ctx context.Context, id string, o coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	if s.failAcquire.CompareAndSwap(true, false) {
		s.armed.Store(true)
		return coordination.RunLease{}, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.AcquireRun(ctx, id, o, ttl)
}

func (s *undoRaceStore) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	if s.readsDown.Load() > 0 {
		s.readsDown.Add(-1)
		return nil, fmt.Errorf("test: %w", coordination.ErrStoreUnavailable)
	}
	return s.Store.ReadRun(ctx, id)
}

func (s *undoRaceStore) LockRun(ctx context.Context, id string) (func(), error) {
	unlock, err := s.Store.LockRun(ctx, id)
	if err != nil {
		return nil, err
	}
	return func() {
		unlock()
		if s.armed.CompareAndSwap(true, false) {
			s.hook()
		}
	}, nil
}

// TestAnUndoOfAFailedStartNeverReleasesTheNextClaim: a start's run claim
// fails (an outage, nothing written) and, the moment its run lock goes, a
// Finalize claims the run with the same lease version. The failed claim's
// undo, registered only after the lock went, missed the Finalize's stop
// (undos.end), read the Finalize's lease as its own claim and released it:
// the Finalize's finish then failed with its lease lost, and the session
// read decided with nothing to write its answer.
func TestAnUndoOfAFailedStartNeverReleasesTheNextClaim(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inFinal := make(chan struct{}, 2)
	gate := make(chan struct{})
	presenting(provs, func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
		inFinal <- struct{}{}
		<-gate
		return coordtest.Answer("FINAL"), providers.Usage{}, nil
	})
	st := &undoRaceStore{Store: memstore.New()}
	h := &coordtest.Harness{T: t, Providers: provs, Store: st.Store}
	h.Service = coordination.NewService(st, coordination.Options{Open: h.Open, RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: 2 * time.Second})
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	bothAnswered(t, h.Service, sc, s.ID)
	ctx := context.Background()
	fin := make(chan error, 1)
	st.hook = func() {
		// finalize_team comes in as the failed start lets go of the lock
		go func() {
			_, err := h.Service.Finalize(ctx, s.ID, "")
			fin <- err
		}()
		<-inFinal             // it holds its claim, in its final call
		st.readsDown.Store(1) // the undo's first read meets the outage
	}
	st.failAcquire.Store(true)
	if _, _, err := h.Service.Start(ctx, s.ID); !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("the start: %v, want the outage", err)
	}
	time.Sleep(600 * time.Millisecond) // the undo's retry
	l, _ := st.Store.ReadRun(ctx, s.ID)
	close(gate)
	ferr := <-fin
	v, _ := h.Service.Status(ctx, s.ID)
	if l == nil || l.Released || ferr != nil || v.Result.Status != coordination.StatusFinished {
		t.Fatalf("the lease while Finalize's final call ran: %+v; Finalize: %v; the session reads %s. Want the lease held, the session finished", l, ferr, v.Result.Status)
	}
}
