package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestCloseEndsTheRenewalsUnderWay: a renewal still under way when the
// store closes (here one waiting alone for a row a stalled rival holds,
// which would wait 4 s) ends at Close with an error instead of running on
// against a closed pool, Close does not wait out its timeout, and a renewal
// asked after Close is refused at once.
func TestCloseEndsTheRenewalsUnderWay(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("test"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rival := replicaOn(t, dsn, Options{})
	stalled, err := rival.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stalled.Rollback(ctx) }()
	if _, err := stalled.Exec(ctx, `SELECT 1 FROM leases WHERE tenant = $1 AND session_id = 's' AND agent_id = '' FOR UPDATE`, a.tenant); err != nil {
		t.Fatal(err)
	}
	var stalledPid int
	if err := stalled.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&stalledPid); err != nil {
		t.Fatal(err)
	}
	renewed := make(chan error, 1)
	go func() {
		_, err := a.RenewRun(ctx, "s", l.Version, time.Minute)
		renewed <- err
	}()
	// The batch passes the row by; the renewal then waits alone, on the
	// stalled transaction's lock: waited for, not slept for (a fixed sleep
	// closed the store before the renewal waited, under a loaded run).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var blocked int
		if err := rival.db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, stalledPid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the renewal never waited on the stalled row")
		}
	}
	start := time.Now()
	a.db.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v: it waited out the stalled renewal instead of ending it", took)
	}
	select {
	case err := <-renewed:
		if err == nil {
			t.Error("a renewal waiting on a row another transaction holds succeeded across Close; want an error")
		}
	default:
		t.Fatal("Close returned while a renewal was still under way")
	}
	if _, err := a.RenewRun(ctx, "s", l.Version, time.Minute); !errors.Is(err, errClosed) {
		t.Errorf("a renewal after Close = %v, want %v", err, errClosed)
	}
}
