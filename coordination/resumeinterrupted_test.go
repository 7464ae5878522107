package coordination_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// cancelOnLeaseRead lands a cancel, once, while the session listing reads
// the run's lease: after the listing read the session as interrupted and
// before anything starts it, the window serve --resume-interrupted has.
type cancelOnLeaseRead struct {
	*memstore.Store
	once   sync.Once
	cancel func()
}

func (c *cancelOnLeaseRead) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	l, err := c.Store.ReadRun(ctx, id)
	c.once.Do(c.cancel)
	return l, err
}

// TestResumingInterruptedSessionsKeepsACancelThatLandsMeanwhile: a session
// listed as interrupted and cancelled before serve --resume-interrupted
// starts it stays cancelled: the resume lifts no cancel it did not see.
func TestResumingInterruptedSessionsKeepsACancelThatLandsMeanwhile(t *testing.T) {
	ctx := context.Background()
	raw := memstore.New()
	models, _, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	other := coordination.NewService(raw, coordination.Options{Open: h.Open})
	seed := int64(1)
	s, err := other.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	coordtest.RunDied(t, raw, s.ID)

	var cancelErr error
	var cancelled *coordination.TeamResult
	st := &cancelOnLeaseRead{Store: raw, cancel: func() { cancelled, cancelErr = other.Cancel(ctx, s.ID) }}
	h.Service = coordination.NewService(st, coordination.Options{Parallel: 2, Open: h.Open, Logger: zerolog.New(zerolog.NewTestWriter(t))})
	resumed, err := h.Service.ResumeInterrupted(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cancelErr != nil || cancelled == nil || cancelled.Status != coordination.StatusCancelled {
		t.Fatalf("the cancel that landed during the listing = %+v, %v; want cancelled", cancelled, cancelErr)
	}
	for _, id := range resumed {
		if r, ok := h.Service.Running(id); ok {
			<-r.Done()
		}
	}
	v, err := other.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusCancelled || v.Result.Steps != 0 {
		t.Errorf("after the resume the session is %s with %d steps (resumed %v); the cancel was acknowledged at 0 steps", v.Result.Status, v.Result.Steps, resumed)
	}
}
