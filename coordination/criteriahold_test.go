package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// ledgerFailsWhileHeld is a store whose ledger cannot be read while the
// service holds spend in flight for a session (once armed): it fails the
// read a criteria call makes after it has opened its hold.
type ledgerFailsWhileHeld struct {
	coordination.Store
	svc   *coordination.Service
	armed atomic.Bool
}

func (f *ledgerFailsWhileHeld) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	if f.armed.Load() && coordination.SpendsInFlight(f.svc) > 0 {
		return nil, errors.New("dummy: the store went away")
	}
	return f.Store.Ledger(ctx, id)
}

// TestACriteriaCallThatFailsBeforeItsModelLetsItsHoldGo: a session's
// criteria call joins its spend in flight (spendhold.go) before it reads
// the session's cancels; when that read fails, the call ends with the
// error and must let its place go. Before, the hold was let go only from a
// defer set after that read, so it stayed in runs.spends for the life of
// the process, one more for every such failure.
func TestACriteriaCallThatFailsBeforeItsModelLetsItsHoldGo(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	store := &ledgerFailsWhileHeld{Store: memstore.New()}
	svc := coordination.NewService(store, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	store.svc = svc
	budget := 5.0
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	store.armed.Store(true)
	_, err = svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	t.Logf("the criteria call: %v; %d model calls", err, calls.Load())
	if err == nil {
		t.Fatal("the criteria call succeeded; want the store's failure (the test's store fails the read made while the call holds its place)")
	}
	if n := coordination.SpendsInFlight(svc); n != 0 {
		t.Errorf("%d session(s) still have spend in flight after the criteria call ended; want none, its hold let go", n)
	}
}

// blockFirstRunLock pauses the first LockRun (a criteria call's attach
// takes it, after the call's usage is recorded) until release is closed.
type blockFirstRunLock struct {
	coordination.Store
	once             atomic.Bool
	entered, release chan struct{}
}

func (b *blockFirstRunLock) LockRun(ctx context.Context, id string) (func(), error) {
	if b.once.CompareAndSwap(false, true) {
		close(b.entered)
		<-b.release
	}
	return b.Store.LockRun(ctx, id)
}

// TestACriteriaCallsSpendIsNotCountedTwiceWhileItAttaches: the first
// criteria call has spent $0.30, recorded in the ledger, and is attaching
// its criteria when a second call asks, under a cost_budget_usd of $0.80.
// The second reads the $0.30 from the ledger; with its own worst case
// (about $0.33) that is $0.63, which fits. Before, the first call still
// held its reservation (about $0.33) until its attach was done, so the
// second counted the first's spend twice, $0.96, and was refused.
func TestACriteriaCallsSpendIsNotCountedTwiceWhileItAttaches(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	store := &blockFirstRunLock{Store: memstore.New(), entered: make(chan struct{}), release: make(chan struct{})}
	svc := coordination.NewService(store, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	budget := 0.80
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
	<-store.entered // the first call's usage is recorded; its attach waits
	// The second needs nothing the first holds: the first waits before
	// it takes the run or session lock.
	_, secondErr := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	close(store.release)
	if err := <-firstDone; err != nil {
		t.Errorf("the first criteria call: %v", err)
	}
	cost, _ := sessionSpend(t, svc, s.ID)
	t.Logf("%d criteria calls made; the session spent $%.4f of $0.80; the second call: %v", calls.Load(), cost, secondErr)
	if errors.Is(secondErr, coordination.ErrBudgetTooSmall) {
		t.Errorf("the second call was refused (%v); want it made: $0.30 spent and its worst case of about $0.33 fit $0.80", secondErr)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the criteria model was called %d times; want twice", n)
	}
	if n := coordination.SpendsInFlight(svc); n != 0 {
		t.Errorf("%d session(s) still have spend in flight after both calls ended", n)
	}
}
