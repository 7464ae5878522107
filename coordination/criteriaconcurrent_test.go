package coordination_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// TestConcurrentCriteriaCallsCannotTogetherPassTheBudget: a session of two
// free sim agents whose cost_budget_usd of $0.50 pays for one criteria
// call's worst case (about $0.34) but not two. The first call is held inside its model while a
// second asks: the second must count the first's worst case as spent
// (reserved) and be refused before its model is asked. Before, both read
// the same $0 spent, both were made, and the session spent $0.60 of $0.50.
func TestConcurrentCriteriaCallsCannotTogetherPassTheBudget(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	open, entered, release := heldFirstCriteriaCall(&calls, nil)
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: open})
	budget := 0.50
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() {
		_, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		firstDone <- err
	}()
	<-entered
	_, secondErr := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	close(release)
	firstErr := <-firstDone
	cost, _ := sessionSpend(t, svc, s.ID)
	t.Logf("%d criteria calls made; the session spent $%.4f of $0.50; the first call: %v; the second: %v", calls.Load(), cost, firstErr, secondErr)
	if firstErr != nil {
		// Before, the second call's spend ended the session by its budget
		// while the first was out, and the first's criteria were refused.
		t.Errorf("the first criteria call, its worst case reserved: %v; want its criteria attached", firstErr)
	}
	if !errors.Is(secondErr, coordination.ErrBudgetTooSmall) {
		t.Errorf("the second call, made while the first's worst case was out: %v; want it refused (budget too small)", secondErr)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the criteria model was called %d times; want once, the second call's worst case not fitting beside the first's", n)
	}
	if math.Abs(cost-criteriaCallCost) > 1e-9 {
		t.Errorf("the session spent $%.4f under a cost_budget_usd of $0.50; want $0.30, the one call", cost)
	}
}
