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

	"github.com/massgen-go/massgen-mcp/coordination"
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

// cutBeforeNotify is a replica beside a whose first write carrying a
// NOTIFY while armed is cut before it: what came before it (a COMMIT among
// them) reaches the server, the NOTIFY and the answers never do.
func (l *lostAnswer) cutBeforeNotify() (cut *Store, armed *atomic.Bool) {
	armed, wasCut := &atomic.Bool{}, &atomic.Bool{}
	cut = l.beside(func(c net.Conn) net.Conn {
		return &cutBefore{Conn: c, mark: []byte(l.a.db.channel), armed: armed, cut: wasCut}
	})
	return cut, armed
}

// TestALandingFoundOnRetryIsHeardByTheOtherReplicas: a landing commits,
// then notifies (commitThenNotify); one whose connection was lost between
// the two committed unheard and told its caller the database was
// unavailable. Its retry finds the stored entry and reports it landed
// (TestALandingLostAtItsCommitIsFoundOnRetry); another replica's watcher
// must hear of it then, as it heard of every landing when the NOTIFY was
// in the landing's transaction, not only at the session's next change.
func TestALandingFoundOnRetryIsHeardByTheOtherReplicas(t *testing.T) {
	l := newLostAnswer(t)
	ctx := context.Background()
	cut, armed := l.cutBeforeNotify()
	lock, err := cut.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	e := newAnswer("agent_a", "committed unheard")
	e.Time = time.Now()
	armed.Store(true)
	if _, err := lock.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e); !unavailable(err) {
		t.Fatalf("a landing whose connection was lost before its NOTIFY = %v; want the database unavailable", err)
	}
	if armed.Load() {
		t.Fatal("the landing's batch never carried its NOTIFY, which tests nothing")
	}
	l.waitForRows("entries", 1, "entries after the cut landing (its COMMIT ran)")
	l.notYetHeard(stepsChanged, "a landing")
	if _, err := lock.(coordination.ReleasingStepLock).AppendAndRelease(ctx, e); err != nil {
		t.Fatalf("the retry of a landing committed before its connection was lost: %v; want the stored entry found", err)
	}
	l.mustHear(stepsChanged, "a landing its retry found committed")
}
