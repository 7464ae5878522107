package pgstore_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storebench"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// open opens a fresh schema of the test database, closed when the test ends.
func open(t testing.TB) *pgstore.DB {
	t.Helper()
	dsn := pgtest.Schema(t)
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func openStore(t testing.TB) coordination.Store {
	t.Helper()
	st, err := open(t).For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) coordination.Store { return openStore(t) })
}

func TestStoresContract(t *testing.T) {
	storetest.RunStores(t, func(t *testing.T) coordination.Stores { return open(t) })
}

func TestStoreBenchmarkRuns(t *testing.T) {
	storebench.Check(t, openStore)
}

// BenchmarkStore is the shared store benchmark (storebench) on PostgreSQL.
func BenchmarkStore(b *testing.B) {
	storebench.Run(b, openStore)
}
