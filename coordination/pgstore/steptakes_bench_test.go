package pgstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// BenchmarkStepTakes measures what a step lock's take, with its numbering
// and its lease's claim (an agent's first, an insert, so every take's
// transaction commits durably), costs the database's CPU, sent alone or
// in a group of 8 or 32 (steptakes.go): the CPU time of the one backend
// that runs them, read from /proc, so a loaded machine moves it little.
// It reports pg-µs/take; skipped where the database's processes cannot be
// read (not on this host).
func BenchmarkStepTakes(b *testing.B) {
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
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("s%d", i)
				if err := s.Create(ctx, storetest.NewSession(ids[i])); err != nil {
					b.Fatal(err)
				}
			}
			now := time.Now().UTC().Truncate(time.Millisecond)
			lease := coordination.RunLease{LeaseOwner: coordination.ThisProcess("bench"), Version: 1, Claimed: now, Renewed: now, Expires: now.Add(time.Hour)}
			var used time.Duration
			b.ResetTimer()
			for i := range b.N {
				ts := make([]*stepTake, n)
				for j := range ts {
					ts[j] = &stepTake{s: s, id: ids[j], agent: "agent_a", fold: &claimFold{next: lease}, token: fmt.Sprintf("tok-%d-%d", i, j)}
				}
				batch := &pgx.Batch{}
				if n > 1 {
					batch.Queue(stepTakeWaitSet)
				}
				queueTakes(batch, ts, nil)
				before, _ := backendCPU(pid)
				br := conn.SendBatch(ctx, batch)
				if n > 1 {
					if _, err := br.Exec(); err != nil {
						b.Fatal(err)
					}
				}
				if err := readTakes(br, ts); err != nil {
					b.Fatal(err)
				}
				if err := br.Close(); err != nil {
					b.Fatal(err)
				}
				after, _ := backendCPU(pid)
				used += after - before
				for _, t := range ts {
					if t.got == "" || !t.fold.claimed {
						b.Fatalf("%s: took %q, claimed %v", t.id, t.got, t.fold.claimed)
					}
				}
				// Let them go on another connection, uncounted.
				b.StopTimer()
				if _, err := s.db.pool.Exec(ctx, `WITH l AS (DELETE FROM locks WHERE tenant = $1) DELETE FROM leases WHERE tenant = $1`, s.tenant); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(used.Microseconds())/float64(b.N*n), "pg-µs/take")
		})
	}
}

// backendCPU is the user and system CPU time a process of this host has
// used, from /proc (in clock ticks of 10 ms, Linux's USER_HZ).
func backendCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat has %d fields", pid, len(f))
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
