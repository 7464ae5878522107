package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// cutThen is cutBefore that runs then once its cut is made, before the
// writer hears of it: what another goroutine of the replica does while the
// writer's connection is being lost.
type cutThen struct {
	*cutBefore
	then func()
}

func (c *cutThen) Write(p []byte) (int, error) {
	was := c.cut.Load()
	n, err := c.cutBefore.Write(p)
	var op *net.OpError
	if !was && c.cut.Load() && errors.As(err, &op) && errors.Is(op.Err, syscall.ECONNRESET) {
		c.then()
	}
	return n, err
}

// TestASessionEntryReadByAnotherCallBeforeItsWriterHeardIsStillHeard: a
// session entry's COMMIT ran and its connection was lost before its NOTIFY;
// meanwhile, before its writer heard of the loss, another call of the same
// replica (a step launch's LendState) read the log on and kept the entry.
// The writer's own read after the outage reads on from there and finds
// nothing new; the other replicas must hear of the entry all the same.
func TestASessionEntryReadByAnotherCallBeforeItsWriterHeardIsStillHeard(t *testing.T) {
	l := newLostAnswer(t)
	ctx := context.Background()
	armed, wasCut := &atomic.Bool{}, &atomic.Bool{}
	var cut *Store
	var between error // what the read made between the commit and the loss found
	cut = l.beside(func(c net.Conn) net.Conn {
		return &cutThen{cutBefore: &cutBefore{Conn: c, mark: []byte(l.a.db.channel), armed: armed, cut: wasCut}, then: func() {
			between = readAfterCommit(ctx, l.a, cut)
		}}
	})
	// The writer's replica keeps the session's log, as a running one does.
	if _, _, _, err := cut.LendState(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	e := coordination.SessionEntry{Kind: coordination.SessionRevote, Time: time.Now(), Agents: []string{"agent_a"}}
	armed.Store(true)
	if _, err := cut.AppendSession(ctx, "s", e); !unavailable(err) {
		t.Fatalf("a session entry whose connection was lost before its NOTIFY = %v; want the database unavailable", err)
	}
	if armed.Load() {
		t.Fatal("the entry's batch never carried its NOTIFY, which tests nothing")
	}
	if between != nil {
		t.Fatal(between)
	}
	l.notYetHeard(sessionChanged, "an entry")
	lent, _, _, err := cut.LendState(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(lent.Session) != 1 || lent.Session[0].Kind != coordination.SessionRevote {
		t.Fatalf("the log read after the cut write: %+v; want the revote it committed", lent.Session)
	}
	l.mustHear(sessionChanged, "a session entry its writer's read after the outage holds, read first by another call")
}

// readAfterCommit waits for the cut write's entry to be stored (a reads
// it), then has cut read the log on, as a concurrent call would.
func readAfterCommit(ctx context.Context, a, cut *Store) error {
	if n, err := storedAfterCut(ctx, a, "session_log"); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("%d session entries stored after the cut write, want 1 (its COMMIT ran)", n)
	}
	l, _, _, err := cut.LendState(ctx, "s")
	if err != nil {
		return err
	}
	if len(l.Session) != 1 {
		return fmt.Errorf("the read between the commit and the loss found %d session entries, want the revote", len(l.Session))
	}
	return nil
}
