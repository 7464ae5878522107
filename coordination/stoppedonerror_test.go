package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// brokenStepStore refuses every step lock with its fail error while one
// is set (not busy, not an outage): a run's step fails with it.
type brokenStepStore struct {
	*memstore.Store
	fail atomic.Pointer[error]
}

var errStepStoreBroken = errors.New("dummy: the step store is broken")

func (s *brokenStepStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	if err := s.fail.Load(); err != nil {
		return nil, *err
	}
	return s.Store.LockStep(ctx, id, agent)
}

func (s *brokenStepStore) failWith(err error) {
	if err == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&err)
}

// TestARunThatStopsOnAnErrorLeavesItsSessionCancelledNotRunning: a run
// whose step fails with an error of the store's returns it, and the
// session reads cancelled with the error as its reason (it read running
// for ever: nothing ran it, and its released lease never read
// interrupted); resuming it runs it to its end.
func TestARunThatStopsOnAnErrorLeavesItsSessionCancelledNotRunning(t *testing.T) {
	st := &brokenStepStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	st.failWith(errStepStoreBroken)
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, errStepStoreBroken) {
		t.Fatalf("run: %v, want the step's error", err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusCancelled {
		t.Fatalf("status after the run stopped on an error: %s, want %s", v.Result.Status, coordination.StatusCancelled)
	}
	// The result says why, not only the timeline: a task or a brief
	// result shows it to a caller who never reads the timeline.
	if why := v.Result.CancelReason; !strings.Contains(why, "stopped on an error") || !strings.Contains(why, "step store is broken") {
		t.Errorf("the result's cancel reason: %q; want the error the run stopped on", why)
	}
	said := false
	for _, ev := range v.Timeline {
		said = said || (ev.Type == "cancelled" && strings.Contains(ev.Message, "stopped on an error") && strings.Contains(ev.Message, "step store is broken"))
	}
	if !said {
		t.Errorf("the timeline does not say why the run stopped: %+v", v.Timeline)
	}
	st.failWith(nil)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("resuming after the error: %v", err)
	}
	if res.Status != coordination.StatusFinished || res.CancelReason != "" {
		t.Fatalf("resumed run ended %s (cancel reason %q), want finished with none", res.Status, res.CancelReason)
	}
}

// TestARunFencedByALostLeaseWritesNoCancel: a run stopped because another
// process claimed a lease it held writes nothing: the session is that
// process's now, and reads running.
func TestARunFencedByALostLeaseWritesNoCancel(t *testing.T) {
	st := &brokenStepStore{Store: memstore.New()}
	svc, s := leasedTeam(t, st, &coordtest.SyncBuffer{})
	ctx := context.Background()
	st.failWith(fmt.Errorf("step fenced: %w", coordination.ErrLeaseLost))
	if _, err := svc.Run(ctx, s.ID, nil); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("run: %v, want the lost lease", err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusRunning {
		t.Fatalf("status after a fenced run: %s, want %s (left to the lease's new holder)", v.Result.Status, coordination.StatusRunning)
	}
}

// budgetOutageStore loses the session lock's answer once, when armed, once
// both of the team's first steps are in the ledger: the next take of the
// lock is the run loop's end for the budget.
type budgetOutageStore struct {
	*leasedStore
	armed atomic.Bool
}

func (s *budgetOutageStore) LockSession(ctx context.Context, id string) (func(), error) {
	if l, err := s.Store.Ledger(ctx, id); err == nil && len(l.Agents["agent_a"])+len(l.Agents["agent_b"]) == 2 && s.armed.CompareAndSwap(true, false) {
		return nil, errLostAnswer
	}
	return s.leasedStore.LockSession(ctx, id)
}

// TestABudgetsEndThatMeetsAnOutageWaitsForTheStore: the run loop's end for
// a budget (no step in flight, the next one unaffordable) that finds the
// store unreachable pauses and tries again, as every other write of the
// loop does, instead of stopping the run on the outage.
func TestABudgetsEndThatMeetsAnOutageWaitsForTheStore(t *testing.T) {
	provs := map[string]providers.Provider{}
	var agents []coordination.Agent
	for i, id := range []string{"agent_a", "agent_b"} {
		sp, _ := providers.ParseSpec(fmt.Sprintf("sim:seed=%d", 20+i))
		provs[sp.String()] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			cost := 0.1
			return coordtest.Answer("Answer: " + id), providers.Usage{Input: 10, Output: 5, CostUSD: &cost}, nil
		})
		agents = append(agents, coordination.Agent{ID: id, Model: sp.String()})
	}
	st := &budgetOutageStore{leasedStore: &leasedStore{Store: memstore.New()}}
	st.armed.Store(true)
	svc := coordination.NewService(st, coordination.Options{Open: func(sp providers.Spec) (providers.Provider, error) { return provs[sp.String()], nil }})
	ctx := context.Background()
	budget := 0.25
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "t", Agents: agents, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("a budget's end that met an outage stopped the run: %v", err)
	}
	if st.armed.Load() {
		t.Fatal("the outage never met the budget's end; the test tests nothing")
	}
	if res.StopReason == nil || *res.StopReason != coordination.StopBudget || res.Steps != 2 {
		t.Fatalf("after the outage: %s, want the budget's end after 2 steps", coordtest.JSON(res))
	}
}
