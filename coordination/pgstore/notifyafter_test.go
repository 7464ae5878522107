package pgstore

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// batchLog records each pipelined batch's statements in order.
type batchLog struct {
	RoundTrips
	mu      sync.Mutex
	batches [][]string
}

func (b *batchLog) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	sqls := make([]string, 0, d.Batch.Len())
	for _, q := range d.Batch.QueuedQueries {
		sqls = append(sqls, strings.TrimSpace(q.SQL))
	}
	b.mu.Lock()
	b.batches = append(b.batches, sqls)
	b.mu.Unlock()
	return b.RoundTrips.TraceBatchStart(ctx, c, d)
}

// TestADurableWriteCommitsBeforeItNotifies: a NOTIFY holds a database-wide
// lock from its transaction's commit until the commit is done, so in a
// landing or a session entry, which wait for the WAL flush, every other
// notifying commit on the server waited for that flush in turn (the
// 1,000-session bench's landings queued on it). Each such batch commits its
// writes first and notifies after, in the same round trip.
func TestADurableWriteCommitsBeforeItNotifies(t *testing.T) {
	log := &batchLog{}
	a := replicaOn(t, pgtest.Schema(t), Options{Tracer: log})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "an answer")
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled}); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	notifying := 0
	for _, sqls := range log.batches {
		at := -1
		for i, q := range sqls {
			if strings.Contains(q, "pg_notify") {
				at = i
			}
		}
		if at < 0 || strings.Contains(sqls[0], "synchronous_commit', 'off'") {
			continue // no notify, or a commit that does not wait for the flush
		}
		notifying++
		if at == 0 || sqls[at-1] != "COMMIT" || sqls[0] != "BEGIN" {
			t.Errorf("a durable batch notifies inside its transaction (the lock held through the WAL flush): %q", sqls)
		}
	}
	if notifying < 2 {
		t.Fatalf("saw %d durable notifying batches, want the landing's and the session entry's: %q", notifying, log.batches)
	}
}

// TestARefusedLandingLeavesItsConnectionIdle: a landing refused inside its
// transaction (the lock row taken by another holder) lands nothing; a
// write commitThenNotify sends that fails is rolled back on its connection,
// which is left idle and usable (given back to the pool inside its
// transaction, the pool would drop it). Read on the connection itself: the
// pool's count of connections made also moves when a background read (the
// clock's, the heartbeat's) takes one beside the test's.
func TestARefusedLandingLeavesItsConnectionIdle(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "warm")
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET token = 'another-holder' WHERE session_id = 's' AND name = 'step:agent_a'`); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "refused", Label: "agent_a.1"}); err == nil {
		t.Fatal("a landing under a lock row another holder has was recorded")
	}
	lg, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lg.Agents["agent_a"]); n != 1 {
		t.Errorf("agent_a has %d entries after the refused landing, want 1", n)
	}

	conn, err := a.db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue(`SELECT massgen_hold_lock($1, $2, $3, $4, $5)`, a.tenant, "s", "step:agent_a", "not-the-holder", lockTTL.Milliseconds())
	if err := a.commitThenNotify(ctx, conn, b, "s", coordination.Change{Steps: true}); err == nil {
		t.Fatal("a write under a lock row another holder has committed")
	}
	if st := conn.Conn().PgConn().TxStatus(); st != 'I' {
		t.Errorf("after the refused write its connection's transaction status is %q, want idle ('I'): the pool would drop it", st)
	}
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("a query on the refused write's connection: %d, %v", one, err)
	}
}
