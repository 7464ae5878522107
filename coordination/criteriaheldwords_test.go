package coordination_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACriteriaRefusalSaysWhatIsHeldInFlight: a criteria call refused
// because another call's worst case holds the room says how much is held
// there apart from what is spent, and that asking again once that call has
// ended may fit; a call refused with nothing else in flight names no
// calls in flight. Before, every refusal of a session's call read "$X is
// spent or held by the calls in flight", whether or not any was, and none
// said that waiting could help.
func TestACriteriaRefusalSaysWhatIsHeldInFlight(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	writers := criteriaWriters(&calls)
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	open := func(sp providers.Spec) (providers.Provider, error) {
		p, err := writers(sp)
		if err != nil {
			return nil, err
		}
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose == providers.PurposeCriteria && first.CompareAndSwap(false, true) {
				close(entered)
				<-release
			}
			return p.Step(ctx, req)
		}), nil
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: open})
	create := func(budget float64) *coordination.Session {
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
			Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	alone := create(0.20)
	first.Store(true) // the lone call is not held
	_, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: alone.ID, Model: criteriaModel, Count: 3})
	t.Logf("alone: %v", err)
	if err == nil || strings.Contains(err.Error(), "in flight") {
		t.Errorf("a call refused with nothing else in flight: %v; want a refusal naming no calls in flight", err)
	}
	first.Store(false)
	s := create(0.50)
	firstDone := make(chan error, 1)
	go func() {
		_, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		firstDone <- err
	}()
	<-entered
	_, err = svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	close(release)
	if ferr := <-firstDone; ferr != nil {
		t.Errorf("the first call: %v", ferr)
	}
	t.Logf("beside another: %v", err)
	if err == nil || !strings.Contains(err.Error(), "and $0.33 is held by the calls and steps in flight") {
		t.Errorf("a call refused beside another's worst case: %v; want it to say $0.33 is held by the calls and steps in flight", err)
	}
	if err == nil || !strings.Contains(err.Error(), "ask again once they have ended") {
		t.Errorf("a call refused beside another's worst case: %v; want it to say to ask again once that call has ended", err)
	}
}
