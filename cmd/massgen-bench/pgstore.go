package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/benchmark"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
)

// storePostgres names the PostgreSQL store in the overhead tables.
const storePostgres = "postgres"

// postgresStore makes PostgreSQL stores on the database at dsn (overhead
// --postgres): each in a schema of its own, dropped when it is done, so the
// measurements start from empty tables as the other stores do.
func postgresStore(ctx context.Context, dsn string) benchmark.StoreMaker {
	return func() (coordination.Store, func(), error) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("--postgres %s: %w", dsn, err)
		}
		defer conn.Close(context.Background())
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		schema := "massgen_bench_" + hex.EncodeToString(b)
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return nil, nil, fmt.Errorf("--postgres: creating schema %s: %w", schema, err)
		}
		drop := func() {
			dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if c, err := pgx.Connect(dctx, dsn); err == nil {
				_, _ = c.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE")
				c.Close(dctx)
			}
		}
		db, err := pgstore.Open(ctx, pgstore.WithSchema(dsn, schema), pgstore.Options{})
		if err != nil {
			drop()
			return nil, nil, err
		}
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			db.Close()
			drop()
			return nil, nil, err
		}
		return st, func() { db.Close(); drop() }, nil
	}
}
