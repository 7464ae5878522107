package pgstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// BenchmarkSessionLocks measures what a session lock's take and its
// let-go cost the database's CPU, sent alone (the lone statements) or in a
// group of 8 or 32 (sessiontakes.go): the CPU time of the one backend that
// runs them, read from /proc, so a loaded machine moves it little. It
// reports pg-µs/take and pg-µs/let-go; skipped where the database's
// processes cannot be read (not on this host).
func BenchmarkSessionLocks(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("group=%d", n), func(b *testing.B) {
			dsn := pgtest.Schema(b)
			s := replicaOn(b, dsn, Options{})
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			var pid int
			if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				b.Fatal(err)
			}
			if _, err := backendCPU(pid); err != nil {
				b.Skipf("the database's backend is not readable here: %v", err)
			}
			ids, tenants := make([]string, n), make([]string, n)
			for i := range ids {
				ids[i], tenants[i] = fmt.Sprintf("s%d", i), s.tenant
				if err := s.Create(ctx, storetest.NewSession(ids[i])); err != nil {
					b.Fatal(err)
				}
			}
			// measure runs q on the benchmark's backend, its CPU counted; a
			// take's answer has its tokens in column tokenAt (-1: a let-go).
			measure := func(tokenAt int, q string, args ...any) time.Duration {
				before, _ := backendCPU(pid)
				rows, err := conn.Query(ctx, q, args...)
				if err != nil {
					b.Fatal(err)
				}
				taken := 0
				for rows.Next() {
					vals, err := rows.Values()
					if err != nil {
						b.Fatal(err)
					}
					if tokenAt >= 0 && vals[tokenAt] != "" {
						taken++
					}
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				after, _ := backendCPU(pid)
				if tokenAt >= 0 && taken != n {
					b.Fatalf("took %d of %d session locks", taken, n)
				}
				return after - before
			}
			var takes, letGos time.Duration
			b.ResetTimer()
			for i := range b.N {
				tokens := make([]string, n)
				for j := range tokens {
					tokens[j] = fmt.Sprintf("tok-%d-%d", i, j)
				}
				if n == 1 {
					takes += measure(0, lockTakeBounded, s.tenant, ids[0], "session", tokens[0], lockTTL.Milliseconds(), nil)
					letGos += measure(-1, lockDeleteBounded, s.tenant, ids[0], "session", tokens[0])
					continue
				}
				takes += measure(1, sessionLocksTake, tenants, ids, tokens, lockTTL.Milliseconds(), nil)
				letGos += measure(-1, sessionLocksLetGo, tenants, ids, tokens)
			}
			b.ReportMetric(float64(takes.Microseconds())/float64(b.N*n), "pg-µs/take")
			b.ReportMetric(float64(letGos.Microseconds())/float64(b.N*n), "pg-µs/let-go")
		})
	}
}
