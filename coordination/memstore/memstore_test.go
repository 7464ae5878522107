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

// TestKeepsNoProjections: the memory store keeps no status.json, final files
// or directories (coordination.ProjectionStore), so the service builds none.
func TestKeepsNoProjections(t *testing.T) {
	var st coordination.Store = memstore.New()
	if _, ok := st.(coordination.ProjectionStore); ok {
		t.Fatal("the memory store keeps projections; the service would build status.json on every step for nobody")
	}
	if d := coordination.DirOf(st, "s"); d != "" {
		t.Errorf("DirOf = %q, want \"\"", d)
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
