package pgstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// cutBefore is a connection lost in the middle of a write: of the first
// write holding mark while armed, only the protocol messages before the
// one holding it reach the server, which runs them (a COMMIT among them)
// and never the rest.
//
// A connection lost so never carries pgx's cancel request after it: pgx
// sends one on a new connection as it closes a broken one, and arriving
// while the server still ran the batch, it cancelled the statement running,
// so the COMMIT did not run (7 tests in 10 under load). A connection really
// lost takes the server's reach with it; the cut refuses the cancel.
type cutBefore struct {
	net.Conn
	mark  []byte
	armed *atomic.Bool
	cut   *atomic.Bool // the cut was made: cancel requests are refused
}

// cancelRequestCode is the protocol's CancelRequest code, after the
// message's length (16).
var cancelRequestCode = []byte{0x04, 0xd2, 0x16, 0x2e}

func (c *cutBefore) Write(p []byte) (int, error) {
	if c.cut.Load() && len(p) == 16 && bytes.Equal(p[4:8], cancelRequestCode) {
		c.Conn.Close()
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	i := bytes.Index(p, c.mark)
	if i < 0 || !c.armed.CompareAndSwap(true, false) {
		return c.Conn.Write(p)
	}
	at := 0 // each message: its type, then its length (counting itself)
	for at+5 <= len(p) {
		n := int(binary.BigEndian.Uint32(p[at+1 : at+5]))
		if at+1+n > i {
			break
		}
		at += 1 + n
	}
	c.cut.Store(true)
	if _, err := c.Conn.Write(p[:at]); err != nil {
		return 0, err
	}
	c.Conn.Close()
	return at, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
}

// cutBeforeNotify is a replica beside a on dsn whose first write carrying a
// NOTIFY while armed is cut before it: what came before it (a COMMIT among
// them) reaches the server, the NOTIFY and the answers never do.
func cutBeforeNotify(t *testing.T, dsn string, a *Store) (cut *Store, armed *atomic.Bool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	armed, wasCut := &atomic.Bool{}, &atomic.Bool{}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutBefore{Conn: c, mark: []byte(a.db.channel), armed: armed, cut: wasCut}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &Store{db: newDB(pool, a.db.channel, Options{}), tenant: a.tenant}, armed
}

// TestALandingFoundOnRetryIsHeardByTheOtherReplicas: a landing commits,
// then notifies (commitThenNotify); one whose connection was lost between
// the two committed unheard and told its caller the database was
// unavailable. Its retry finds the stored entry and reports it landed
// (TestALandingLostAtItsCommitIsFoundOnRetry); another replica's watcher
// must hear of it then, as it heard of every landing when the NOTIFY was
// in the landing's transaction, not only at the session's next change.
func TestALandingFoundOnRetryIsHeardByTheOtherReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	cut, armed := cutBeforeNotify(t, dsn, a)
	l, err := cut.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	changes, err := a.Watch(wctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	e := newAnswer("agent_a", "committed unheard")
	e.Time = time.Now()
	armed.Store(true)
	if _, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e); !unavailable(err) {
		t.Fatalf("a landing whose connection was lost before its NOTIFY = %v; want the database unavailable", err)
	}
	if armed.Load() {
		t.Fatal("the landing's batch never carried its NOTIFY, which tests nothing")
	}
	if n, err := storedAfterCut(ctx, a, "entries"); err != nil || n != 1 {
		t.Fatalf("%d entries stored after the cut landing (%v), want 1 (its COMMIT ran)", n, err)
	}
	select {
	case c := <-changes:
		if c.Steps {
			t.Fatal("the other replica heard a landing whose NOTIFY never reached the server, which tests nothing")
		}
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := l.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e); err != nil {
		t.Fatalf("the retry of a landing committed before its connection was lost: %v; want the stored entry found", err)
	}
	deadline := time.After(3 * time.Second)
	for {
		select {
		case c := <-changes:
			if c.Steps {
				return
			}
		case <-deadline:
			t.Fatal("the other replica never heard of a landing its retry found committed (no NOTIFY was sent for it)")
		}
	}
}
