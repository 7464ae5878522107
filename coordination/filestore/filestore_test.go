package filestore_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) coordination.Store { return filestore.New(t.TempDir()) })
}

func benchStore(b *testing.B) *filestore.Store {
	st := filestore.New(b.TempDir())
	if err := st.Create(context.Background(), storetest.NewSession("s")); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkLockSessionUncontended is the cost every decision pays.
func BenchmarkLockSessionUncontended(b *testing.B) {
	st := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		unlock, err := st.LockSession(ctx, "s")
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}

// BenchmarkInFlight is the cost of every status or next_agents check.
func BenchmarkInFlight(b *testing.B) {
	st := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := st.InFlight(ctx, "s"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStep is one whole step: lock, durable append, release.
func BenchmarkStep(b *testing.B) {
	st := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		l, err := st.LockStep(ctx, "s", "agent_a")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindVote, Target: "agent_b"}); err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}
