package memstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/storebench"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
)

func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) coordination.Store { return memstore.New() })
}

// BenchmarkStore is the shared store benchmark (storebench), on the memory
// store.
func BenchmarkStore(b *testing.B) {
	storebench.Run(b, func(testing.TB) coordination.Store { return memstore.New() })
}

func TestStoreBenchmarkRuns(t *testing.T) {
	storebench.Check(t, func(testing.TB) coordination.Store { return memstore.New() })
}

func TestStoresContract(t *testing.T) {
	storetest.RunStores(t, func(*testing.T) coordination.Stores { return memstore.NewStores() })
}

func TestDirIsEmpty(t *testing.T) {
	st := memstore.New()
	if err := st.Create(context.Background(), storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if d := st.Dir("s"); d != "" {
		t.Errorf("Dir = %q, want \"\"", d)
	}
}

func TestStatusAndFinalAreKept(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteStatus(ctx, "s", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteFinal(ctx, "s", []byte(`{"b":2}`), "answer"); err != nil {
		t.Fatal(err)
	}
	if got := string(st.Status("s")); got != `{"a":1}` {
		t.Errorf("Status = %s", got)
	}
	if r, a := st.Final("s"); string(r) != `{"b":2}` || a != "answer" {
		t.Errorf("Final = %s, %q", r, a)
	}
}

// BenchmarkThousandSessions is the shape of the consensus benchmarks: 1,000
// sessions of 4 agents, each agent answering once and voting once.
func BenchmarkThousandSessions(b *testing.B) {
	ctx := context.Background()
	agents := []string{"agent_a", "agent_b", "agent_c", "agent_d"}
	cost := 0.001
	for b.Loop() {
		st := memstore.New()
		for i := range 1000 {
			id := fmt.Sprintf("team_%04d", i)
			if err := st.Create(ctx, storetest.NewSession(id, agents...)); err != nil {
				b.Fatal(err)
			}
			for _, kind := range []coordination.EntryKind{coordination.KindAnswer, coordination.KindVote} {
				for _, a := range agents {
					l, err := st.LockStep(ctx, id, a)
					if err != nil {
						b.Fatal(err)
					}
					e := coordination.Entry{Kind: kind, Content: "391", Target: agents[0],
						SeenSteps: map[string]int{"agent_a": 1, "agent_b": 1, "agent_c": 1, "agent_d": 1},
						Usage:     providers.Usage{Input: 100, Output: 20, CostUSD: &cost}}
					if _, err := l.Append(ctx, e); err != nil {
						b.Fatal(err)
					}
					l.Release()
				}
			}
			if _, err := st.Ledger(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	}
}
