package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// The setup the tests of a replica's held-up writes share (grouped takes,
// landings and events, row waits): sessions made at once, a transaction of
// another connection holding a table or rows, a pool with no connection
// to give, a step lock taken on a goroutine of its own. The replicas
// themselves are replicaOn's and countedReplica's.

// sessionsOn creates sessions ids through st.
func sessionsOn(t *testing.T, st *Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := st.Create(context.Background(), storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
}

// ownTx begins a transaction on a connection of its own, which no
// replica's pool holds nor tracer counts; it is rolled back and its
// connection closed as the test ends.
func ownTx(t *testing.T, dsn string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}

// holdTable keeps every write to table waiting (EXCLUSIVE, on ownTx's
// connection) until release is called, so a test can gather a group
// behind a write in flight instead of trusting the timing.
func holdTable(t *testing.T, dsn, table string) (release func()) {
	t.Helper()
	tx := ownTx(t, dsn)
	if _, err := tx.Exec(context.Background(), `LOCK TABLE `+table+` IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback(context.Background()) }) }
	t.Cleanup(release)
	return release
}

// rowHold is a transaction of another connection holding rows.
type rowHold struct {
	tx  pgx.Tx
	pid uint32
}

// holdSessionRow holds session id's row FOR UPDATE on ownTx's
// connection, as a delete's transaction does first (DeleteSessionSized):
// what writes a row that refers to it (an entry, a lock row) waits.
func holdSessionRow(t *testing.T, dsn string, st *Store, id string) *rowHold {
	t.Helper()
	tx := ownTx(t, dsn)
	if _, err := tx.Exec(context.Background(), `SELECT 1 FROM sessions WHERE tenant = $1 AND id = $2 FOR UPDATE`, st.tenant, id); err != nil {
		t.Fatal(err)
	}
	return &rowHold{tx: tx, pid: tx.Conn().PgConn().PID()}
}

// holdLockRows holds the step lock rows of sessions ids (FOR UPDATE), so
// their landings wait at their lock's fence.
func holdLockRows(t *testing.T, st *Store, ids ...string) *rowHold {
	t.Helper()
	ctx := context.Background()
	tx, err := st.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(ctx, `SELECT 1 FROM locks WHERE tenant = $1 AND session_id = ANY($2) AND name LIKE 'step:%' FOR UPDATE`, st.tenant, ids); err != nil {
		t.Fatal(err)
	}
	return &rowHold{tx: tx, pid: tx.Conn().PgConn().PID()}
}

// waitBlocked waits until at least n backends wait for h's rows, and
// returns their pids.
func (h *rowHold) waitBlocked(t *testing.T, st *Store, n int) []uint32 {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var pids []uint32
		if err := st.db.pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, int(h.pid)).Scan(&pids); err != nil {
			t.Fatal(err)
		}
		if len(pids) >= n {
			return pids
		}
	}
	t.Fatalf("no %d backends came to wait for the held rows", n)
	return nil
}

// holdPool takes every connection of st's pool until release is called,
// so what st sends meanwhile waits for one.
func holdPool(t *testing.T, st *Store) (release func()) {
	t.Helper()
	p := st.db.pool
	var conns []*pgxpool.Conn
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, c := range conns {
				c.Release()
			}
		})
	}
	t.Cleanup(release)
	for range p.Config().MaxConns {
		c, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	return release
}

// lockStepOff takes agent's step lock in session id on a goroutine of its
// own, lets it go, and answers the take's error.
func lockStepOff(ctx context.Context, st *Store, id, agent string) <-chan error {
	out := make(chan error, 1)
	go func() {
		l, err := st.LockStep(ctx, id, agent)
		if err == nil {
			l.Release()
		}
		out <- err
	}()
	return out
}

// heldByAnother writes agent's step lock row in session id as another
// live holder's (a token no take made, for a minute).
func heldByAnother(t *testing.T, st *Store, id, agent string) {
	t.Helper()
	if _, err := st.db.pool.Exec(context.Background(), `INSERT INTO locks (tenant, session_id, name, token, expires_at) VALUES ($1, $2, $3, 'tok-held', now() + interval '1 minute')`, st.tenant, id, "step:"+agent); err != nil {
		t.Fatal(err)
	}
}

// durableReset is the value synchronous_commit resets to on st's
// connections (pg_settings' reset_val); a server whose own default is off
// could not tell a restore from none, so the test is skipped there.
func durableReset(t *testing.T, st *Store) string {
	t.Helper()
	var reset string
	if err := st.db.pool.QueryRow(context.Background(), "SELECT reset_val FROM pg_settings WHERE name = 'synchronous_commit'").Scan(&reset); err != nil {
		t.Fatal(err)
	}
	if reset == "off" {
		t.Skipf("this server's synchronous_commit resets to %q, so a restore could not be seen", reset)
	}
	return reset
}

// firstClaim is a first claim of a step lease (version 1) by this test's
// process, for a minute.
func firstClaim() coordination.RunLease {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return coordination.RunLease{LeaseOwner: coordination.ThisProcess("test"), Version: 1, Claimed: now, Renewed: now, Expires: now.Add(time.Minute)}
}

// syncCommitAfter sends, in one transaction on a connection of st's pool,
// the statements queue adds, then SHOW synchronous_commit, then end
// (COMMIT or ROLLBACK), and returns the setting it showed; read reads
// queue's answers.
func syncCommitAfter(t *testing.T, st *Store, end string, queue func(*pgx.Batch), read func(pgx.BatchResults) error) string {
	t.Helper()
	ctx := context.Background()
	conn, err := st.db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	queue(b)
	var got string
	b.Queue("SHOW synchronous_commit").QueryRow(func(row pgx.Row) error { return row.Scan(&got) })
	b.Queue(end)
	br := conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	if err := read(br); err != nil {
		t.Fatal(err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

// answerWithin waits for ch's answer for d at most; returned is false if
// none came in that time.
func answerWithin(ch <-chan error, d time.Duration) (err error, returned bool) {
	select {
	case err = <-ch:
		return err, true
	case <-time.After(d):
		return nil, false
	}
}
