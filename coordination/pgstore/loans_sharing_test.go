package pgstore

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// heldLoan is session s on a replica with its ledger lent once, agent_a's
// step lock held (until the test ends), and the session's loan taken, so
// that loans asked for now wait behind it.
func heldLoan(t *testing.T) (*Store, *loan) {
	t.Helper()
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.LendLedger(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	lock, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lock.Release)
	ln := a.db.loans.get(a.tenant, "s")
	ln.lock <- struct{}{}
	return a, ln
}

// TestAStateLoanWaitingBehindALedgerOnlyReadReadsTheLocks: a LendState
// that waits while a loan without the locks is read must not take that
// read's (absent) locks as "nobody in flight"; it reads them itself.
func TestAStateLoanWaitingBehindALedgerOnlyReadReadsTheLocks(t *testing.T) {
	a, ln := heldLoan(t)
	ctx := context.Background()
	type res struct {
		held map[string]bool
		err  error
	}
	out := make(chan res, 1)
	go func() { _, h, _, err := a.LendState(ctx, "s"); out <- res{h, err} }()
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	if _, _, err := a.readOn(ctx, "s", ln, false); err != nil {
		t.Fatal(err)
	}
	ln.sent = sent
	<-ln.lock
	r := <-out
	if r.err != nil || !r.held["agent_a"] {
		t.Errorf("LendState behind a ledger-only read: %v, %v; want agent_a", r.held, r.err)
	}
}

// TestStateLoansSharingOneReadGetMapsOfTheirOwn: two LendStates waiting
// together share one read but not one map (a caller deletes from its
// own).
func TestStateLoansSharingOneReadGetMapsOfTheirOwn(t *testing.T) {
	a, ln := heldLoan(t)
	ctx := context.Background()
	out := make(chan map[string]bool, 2)
	for range 2 {
		go func() { _, h, _, _ := a.LendState(ctx, "s"); out <- h }()
	}
	time.Sleep(200 * time.Millisecond)
	<-ln.lock
	m1, m2 := <-out, <-out
	if reflect.ValueOf(m1).Pointer() == reflect.ValueOf(m2).Pointer() {
		t.Errorf("two callers got one map")
	}
	if !m1["agent_a"] || !m2["agent_a"] {
		t.Errorf("maps %v %v", m1, m2)
	}
}
