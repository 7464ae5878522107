package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storebench"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) coordination.Store { return filestore.New(t.TempDir()) })
}

// BenchmarkStore is the shared store benchmark (storebench), on the file
// store under the test's temporary directory.
func BenchmarkStore(b *testing.B) {
	storebench.Run(b, func(tb testing.TB) coordination.Store { return filestore.New(tb.TempDir()) })
}

func TestStoreBenchmarkRuns(t *testing.T) {
	storebench.Check(t, func(tb testing.TB) coordination.Store { return filestore.New(tb.TempDir()) })
}

func TestStoresContract(t *testing.T) {
	storetest.RunStores(t, func(t *testing.T) coordination.Stores { return filestore.NewStores(t.TempDir()) })
}

// TestTenantsLiveInTheirOwnDirectories pins the layout: the default tenant's
// sessions in <state-dir>/sessions/<id>/, another's in
// <state-dir>/tenants/<tenant>/sessions/<id>/.
func TestTenantsLiveInTheirOwnDirectories(t *testing.T) {
	dir := t.TempDir()
	ss := filestore.NewStores(dir)
	for tenant, want := range map[string]string{
		coordination.DefaultTenant: filepath.Join(dir, "sessions", "s1"),
		"acme":                     filepath.Join(dir, "tenants", "acme", "sessions", "s1"),
	} {
		st, err := ss.For(tenant)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(context.Background(), storetest.NewSession("s1")); err != nil {
			t.Fatal(err)
		}
		if got := coordination.DirOf(st, "s1"); got != want {
			t.Errorf("tenant %s: session directory %s, want %s", tenant, got, want)
		}
		if _, err := os.Stat(filepath.Join(want, "session.json")); err != nil {
			t.Errorf("tenant %s: %v", tenant, err)
		}
	}
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
