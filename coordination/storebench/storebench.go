package storebench

import (
	"context"
	"fmt"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Op is one measured operation: Prepare readies a fresh store, Do is the
// i-th operation on it.
type Op struct {
	Name    string
	Prepare func(ctx context.Context, st coordination.Store) error
	Do      func(ctx context.Context, st coordination.Store, i int) error
}

// The session every operation but Create works on, with three agents.
const session = "bench"

var agents = []string{"agent_a", "agent_b", "agent_c"}

// ledgerSize is the entries of the ledger LedgerRead reads: a long session
// (a dozen rounds of three agents, and then some).
const ledgerSize = 48

// Ops are the operations measured, one or more per interface of the Store:
// what a step, a status read and a decision cost the store.
var Ops = []Op{
	{Name: "SessionStore/Create", Do: func(ctx context.Context, st coordination.Store, i int) error {
		return st.Create(ctx, storetest.NewSession(fmt.Sprintf("s%d", i), agents...))
	}},
	{Name: "SessionStore/Session", Prepare: prepare(0), Do: func(ctx context.Context, st coordination.Store, _ int) error {
		_, err := st.Session(ctx, session)
		return err
	}},
	{Name: "LedgerStore/StepAppend", Prepare: prepare(0), Do: func(ctx context.Context, st coordination.Store, i int) error {
		return appendStep(ctx, st, agents[i%len(agents)], i)
	}},
	{Name: "LedgerStore/LedgerRead", Prepare: prepare(ledgerSize), Do: func(ctx context.Context, st coordination.Store, _ int) error {
		_, err := st.Ledger(ctx, session)
		return err
	}},
	{Name: "LedgerStore/AppendSession", Prepare: prepare(0), Do: func(ctx context.Context, st coordination.Store, i int) error {
		_, err := st.AppendSession(ctx, session, coordination.SessionEntry{Kind: coordination.SessionResumed, Reason: "bench"})
		return err
	}},
	{Name: "LockStore/InFlight", Prepare: prepare(0), Do: func(ctx context.Context, st coordination.Store, _ int) error {
		_, err := st.InFlight(ctx, session)
		return err
	}},
	{Name: "LockStore/LockSession", Prepare: prepare(0), Do: func(ctx context.Context, st coordination.Store, _ int) error {
		unlock, err := st.LockSession(ctx, session)
		if err == nil {
			unlock()
		}
		return err
	}},
	{Name: "EventStore/AppendEvent", Prepare: prepare(0), Do: func(ctx context.Context, st coordination.Store, i int) error {
		return st.AppendEvent(ctx, session, coordination.Event{Type: "step_started", Agent: agents[i%len(agents)], Step: i + 1, Message: "bench"})
	}},
}

// prepare creates the session with n entries in its ledger.
func prepare(n int) func(ctx context.Context, st coordination.Store) error {
	return func(ctx context.Context, st coordination.Store) error {
		if err := st.Create(ctx, storetest.NewSession(session, agents...)); err != nil {
			return err
		}
		for i := range n {
			if err := appendStep(ctx, st, agents[i%len(agents)], i); err != nil {
				return err
			}
		}
		return nil
	}
}

// appendStep is a step as the service lands it: the agent's step lock, its
// entry, the release.
func appendStep(ctx context.Context, st coordination.Store, agent string, i int) error {
	l, err := st.LockStep(ctx, session, agent)
	if err != nil {
		return err
	}
	defer l.Release()
	_, err = l.Append(ctx, coordination.Entry{Agent: agent, Kind: coordination.KindAnswer,
		Content: fmt.Sprintf("Step %d: 17 * 23 = 391.\nAnswer: 391", i), Usage: providers.Usage{Input: 900, Output: 120}})
	return err
}

// Run measures every operation on a fresh store from open for each.
func Run(b *testing.B, open func(tb testing.TB) coordination.Store) {
	for _, op := range Ops {
		b.Run(op.Name, func(b *testing.B) {
			ctx := context.Background()
			st := open(b)
			if op.Prepare != nil {
				if err := op.Prepare(ctx, st); err != nil {
					b.Fatalf("prepare: %v", err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := op.Do(ctx, st, i); err != nil {
					b.Fatalf("operation %d: %v", i, err)
				}
				i++
			}
		})
	}
}

// Check runs every operation a few times on a fresh store, as the benchmark
// would: the test that keeps the benchmark working.
func Check(t *testing.T, open func(tb testing.TB) coordination.Store) {
	for _, op := range Ops {
		t.Run(op.Name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			if op.Prepare != nil {
				if err := op.Prepare(ctx, st); err != nil {
					t.Fatalf("prepare: %v", err)
				}
			}
			for i := range 5 {
				if err := op.Do(ctx, st, i); err != nil {
					t.Fatalf("operation %d: %v", i, err)
				}
			}
		})
	}
}
