package pgstore

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// cutAfter is a connection lost right after it sends a write containing
// mark: the server has it all, the client never hears the answer. Before
// failing the read it waits for committed to hold, so the loss is after
// the commit. lose, if set, is how the answer is lost (its error is the
// read's); the connection is cut by default.
type cutAfter struct {
	net.Conn
	mark      []byte
	committed func() bool
	lose      func() error
	cut       atomic.Bool
}

func (c *cutAfter) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.mark) {
		defer c.cut.Store(true)
	}
	return c.Conn.Write(p)
}

func (c *cutAfter) Read(p []byte) (int, error) {
	if !c.cut.Load() {
		return c.Conn.Read(p)
	}
	for deadline := time.Now().Add(5 * time.Second); !c.committed() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if c.lose != nil {
		return 0, c.lose()
	}
	c.Conn.Close()
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// TestAStepLockLostWithItsConnectionIsLetGo: a step lock whose batch
// committed but whose answer was lost with the connection is neither held
// nor left to expire: the heartbeat deletes its row once the database
// answers, and the agent can step again well before lockTTL.
func TestAStepLockLostWithItsConnectionIsLetGo(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := countedReplica(t, dsn, &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	locked := func() bool {
		var n int
		if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = $1 AND session_id = 's' AND name = 'step:agent_a'`, a.tenant).Scan(&n); err != nil {
			t.Error(err)
		}
		return n > 0
	}
	// A replica of its own, its heartbeat run by hand (deleteGone).
	cut := besideOn(t, dsn, a, func(c net.Conn) net.Conn {
		return &cutAfter{Conn: c, mark: []byte("step:agent_a"), committed: locked}
	})
	if _, err := cut.LockStep(ctx, "s", "agent_a"); !unavailable(err) {
		t.Fatalf("LockStep over a connection lost after its commit = %v; want the database unavailable", err)
	}
	if !locked() {
		t.Fatal("the lost LockStep's lock row is not there; the connection was cut before the commit, which tests nothing")
	}
	a.db.deleteGone(ctx) // a's heartbeat: not a's row to delete
	cut.db.deleteGone(ctx)
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		var busy *coordination.BusyError
		if errors.As(err, &busy) {
			t.Fatalf("the agent after a step lock lost with its connection and the next heartbeat: %v; want it free, not busy for lockTTL", err)
		}
		t.Fatal(err)
	}
	l.Release()
}
