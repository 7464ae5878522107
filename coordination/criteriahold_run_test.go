package coordination_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// TestARunLaunchesNoStepIntoACriteriaCallsReservation: a run-driven pair
// on criteriaModel capped at 2,000 output tokens (a first step's worst case
// about $0.09) under a cost_budget_usd of $0.40. A criteria call is in its
// model, its worst case (about $0.33) reserved, when the run starts: a
// launch must count that reservation beside the ledger, so no step starts
// ($0.33 + $0.09 > $0.40), and the run neither ends the session by its
// budget nor launches until the call has let it go (its criteria are
// refused, the session being run, but its spend is the session's). Before,
// a launch counted the reservation only to see whether the budget was
// already reached: the steps ran and the session finished while the call
// was out.
func TestARunLaunchesNoStepIntoACriteriaCallsReservation(t *testing.T) {
	ctx := context.Background()
	var calls, steps atomic.Int32
	open, entered, release := heldFirstCriteriaCall(&calls, &steps)
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: open})
	budget := 0.40
	agent := func(id string) coordination.Agent {
		return coordination.Agent{ID: id, Model: criteriaModel, MaxOutputTokens: 2000}
	}
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Agents: []coordination.Agent{agent("agent_a"), agent("agent_b")},
		Driver: coordination.DriverRun, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	criteriaDone := make(chan error, 1)
	go func() {
		_, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		criteriaDone <- err
	}()
	<-entered
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if _, _, err := svc.Start(runCtx, s.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the loop's passes while the call is out
	launched := steps.Load()
	st, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	criteriaErr := <-criteriaDone
	t.Logf("%d step(s) launched while the criteria call held its worst case; status then %s; the criteria call: %v", launched, st.Result.Status, criteriaErr)
	if launched != 0 {
		t.Errorf("%d step(s) launched beside the criteria call's reservation; want none ($0.33 held + $0.09 > $0.40)", launched)
	}
	if st.Result.Status != coordination.StatusRunning {
		t.Errorf("while the criteria call was out the session was %s; want it still running, waiting for the call", st.Result.Status)
	}
}
