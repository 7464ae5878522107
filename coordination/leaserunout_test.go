package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// paidUntilStopped is a model whose call runs until its context ends (or
// for a minute), then reports what it spent so far; calls counts its calls
// and stopped the ones its context ended; onCall is told of each call as
// it starts (the test stops the store's renewals there).
type paidUntilStopped struct {
	calls, stopped atomic.Int32
	onCall         func(n int32)
}

func (m *paidUntilStopped) provider() providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		n := m.calls.Add(1)
		if m.onCall != nil {
			m.onCall(n)
		}
		c := 0.05
		u := providers.Usage{Input: 500, Output: 50, CostUSD: &c}
		select {
		case <-ctx.Done():
			m.stopped.Add(1)
			return providers.Action{}, u, context.Cause(ctx)
		case <-time.After(time.Minute):
			return coordtest.Answer("Answer: 4"), u, nil
		}
	})
}

// TestAStepWhoseLeaseMayHaveRunOutStopsItsCall: the store stops renewing
// a step's lease mid-call (unreachable). Once the lease may have run out,
// another replica may claim the step and call the same model, so this
// call is stopped then, rather than paid for to the end and fenced at its
// landing: the step says the store was unreachable (ErrStepLeaseRunOut),
// writes no step, and what the call spent is the session's.
func TestAStepWhoseLeaseMayHaveRunOutStopsItsCall(t *testing.T) {
	st := &stallingStore{Store: memstore.New()}
	m := &paidUntilStopped{onCall: func(int32) { st.stalled.Store(true) }}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 20 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond,
		Open: func(providers.Spec) (providers.Provider, error) { return m.provider(), nil }})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.AgentIDs()[0]})
	took := time.Since(start)
	if !errors.Is(err, coordination.ErrStepLeaseRunOut) || !svc.StoreUnreachable(ctx, err) {
		t.Fatalf("the step whose lease may have run out = %v, want ErrStepLeaseRunOut, an outage", err)
	}
	if m.stopped.Load() != 1 || took > 10*time.Second {
		t.Errorf("the call was stopped %d times, the step took %v; want it stopped once its lease's 200 ms may have passed", m.stopped.Load(), took)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if row := agentRow(t, v, s.AgentIDs()[0]); row.Steps != 0 {
		t.Errorf("the stopped step wrote %d steps; want none", row.Steps)
	}
	if u := usageEntries(t, st, s.ID); len(u) != 1 || u[0].Usage.CostUSD == nil || *u[0].Usage.CostUSD != 0.05 || !strings.Contains(u[0].Reason, "cancelled") {
		t.Errorf("usage entries after the stopped call: %+v; want its $0.05", u)
	}
}

// TestARunPausesWhenAStepsLeaseMayHaveRunOut: in a run, a step stopped so
// is an outage: the run pauses, launches the step again from the ledger
// once the store answers, and finishes; the stopped call's spend is in the
// result.
func TestARunPausesWhenAStepsLeaseMayHaveRunOut(t *testing.T) {
	st := &stallingStore{Store: memstore.New()}
	m := &paidUntilStopped{onCall: func(int32) { st.stalled.Store(true) }}
	var first atomic.Bool
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Parallel: 1, RunHeartbeat: 20 * time.Millisecond, RunLeaseTTL: 200 * time.Millisecond,
		Open: func(sp providers.Spec) (providers.Provider, error) {
			inner, err := backends.Open(sp)
			if err != nil {
				return nil, err
			}
			stopping := m.provider()
			return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				if first.CompareAndSwap(false, true) {
					a, u, err := stopping.Step(ctx, req)
					st.stalled.Store(false) // the store answers again
					return a, u, err
				}
				return inner.Step(ctx, req)
			}), nil
		}})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusFinished || m.stopped.Load() != 1 {
		t.Fatalf("the run = %s with %d calls stopped; want finished after one: %s", res.Status, m.stopped.Load(), coordtest.JSON(res))
	}
	if res.CostUSD == nil || *res.CostUSD < 0.05 {
		t.Errorf("the result's cost %v lacks the stopped call's $0.05", res.CostUSD)
	}
}
