package storetest

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// DeadSpendCases are the suite's cases for coordination.DeadSpendStore (a
// store without it skips them): only a holder that stopped answering gives
// its spend up. A holder that died is the store's own to make (an expired
// row); its cases are the store's (the PostgreSQL store's
// TestADeadHoldersSpendIsTakenWithoutAStepOfItsAgent).
var DeadSpendCases = []Case{
	{"ASessionWithoutStepLocksHasNoDeadSpend", testNoDeadSpend},
	{"ALiveHoldersSpendIsNeitherTakenNorFenced", testLiveSpendNotTaken},
}

func deadSpender(t *testing.T, st coordination.Store) coordination.DeadSpendStore {
	t.Helper()
	d, ok := st.(coordination.DeadSpendStore)
	if !ok {
		t.Skip("the store does not give up dead holders' spend (coordination.DeadSpendStore)")
	}
	return d
}

func testNoDeadSpend(t *testing.T, st coordination.Store) {
	d := deadSpender(t, st)
	create(t, st, "s")
	step(t, st, "s", answer("agent_a", "4"))
	if got, err := d.TakeDeadSpend(context.Background(), "s"); err != nil || len(got) != 0 {
		t.Fatalf("TakeDeadSpend of a session whose steps all landed: %+v, %v; want none", got, err)
	}
}

func testLiveSpendNotTaken(t *testing.T, st coordination.Store) {
	d := deadSpender(t, st)
	ctx := context.Background()
	create(t, st, "s")
	l, err := st.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if sl, ok := l.(coordination.SpendSharingStepLock); ok {
		if _, _, err := sl.ShareSpend(ctx, 0.30, 3000); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := d.TakeDeadSpend(ctx, "s"); err != nil || len(got) != 0 {
		t.Fatalf("TakeDeadSpend with agent_a's step live and sharing its spend: %+v, %v; want none", got, err)
	}
	if _, err := l.Append(ctx, answer("agent_a", "4")); err != nil {
		t.Fatalf("the live step's landing after TakeDeadSpend: %v; want it landed, its lock still its own", err)
	}
}
