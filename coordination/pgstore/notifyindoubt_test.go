package pgstore

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// loseAnswer is a connection whose first write carrying mark while armed
// reaches the server whole, and whose answer is then lost at once,
// whatever the server has done with it: a connection that died just after
// a statement was sent, the server yet to run it to its commit. As
// cutBefore, it then refuses pgx's cancel request, which a connection
// really lost never carries.
type loseAnswer struct {
	net.Conn
	mark  []byte
	armed *atomic.Bool
	lost  *atomic.Bool // shared: an answer was lost, so cancel requests are refused
	mine  atomic.Bool  // this connection's answer is lost
}

func (c *loseAnswer) Write(p []byte) (int, error) {
	if c.lost.Load() && len(p) == 16 && bytes.Equal(p[4:8], cancelRequestCode) {
		c.Conn.Close()
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	if bytes.Contains(p, c.mark) && c.armed.CompareAndSwap(true, false) {
		defer c.mine.Store(true)
		defer c.lost.Store(true)
	}
	return c.Conn.Write(p)
}

func (c *loseAnswer) Read(p []byte) (int, error) {
	if !c.mine.Load() {
		return c.Conn.Read(p)
	}
	c.Conn.Close()
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
}

// TestAPermissionChangeInDoubtIsHeardOnceCommitted: a permission decision,
// or an expiry of asks, whose connection died right after its statement
// was sent is in doubt: the server may not have committed it yet. Here
// another transaction holds the session's row, so the statement waits,
// uncommitted, after its writer was told the database was unavailable. A
// NOTIFY sent then sends another replica to read a log without it, and
// the other replicas must hear of it again once it is committed, or their
// views miss it until the session's next change.
func TestAPermissionChangeInDoubtIsHeardOnceCommitted(t *testing.T) {
	const mark = "dummy-record-in-doubt"
	cases := map[string]struct {
		what  string
		asked bool // the case needs a lapsed ask
		write func(context.Context, *Store) error
	}{
		"decision": {what: "a decision", write: func(ctx context.Context, st *Store) error {
			return st.AppendPermission(ctx, "s", permissions.Record{Time: time.Now(), Agent: mark, Tool: "run_command",
				Action: permissions.Action{Kind: permissions.Exec, Target: "go test ./..."}, Risk: permissions.RiskLocal,
				Verdict: permissions.Allow, Rule: "role workspace", Outcome: permissions.Allowed})
		}},
		"expiry": {what: "an expiry of asks", asked: true, write: func(ctx context.Context, st *Store) error {
			_, err := st.ExpireApprovals(ctx, "s", func(r permissions.ApprovalRequest) permissions.Record {
				return permissions.Record{Time: time.Now(), Agent: r.Agent, Tool: r.Tool, Action: r.Action, Risk: r.Risk,
					Verdict: permissions.Ask, Rule: r.Rule, Outcome: permissions.Refused, By: mark, Request: r.ID}
			})
			return err
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l := newLostAnswer(t)
			ctx := context.Background()
			if c.asked {
				at := ms(time.Now())
				req := permissions.ApprovalRequest{ID: "aaaa000001", Session: "s", Agent: "agent_a", Tool: "dummy_tool",
					Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal,
					Rule: "role workspace", Asked: at.Add(-10 * time.Minute), Expires: at.Add(-5 * time.Minute)}
				if err := l.a.RequestApproval(ctx, "s", req); err != nil {
					t.Fatal(err)
				}
				l.mustHear(permissionsChanged, "the ask")
			}
			armed, lost := &atomic.Bool{}, &atomic.Bool{}
			cut := l.beside(func(c net.Conn) net.Conn {
				return &loseAnswer{Conn: c, mark: []byte(mark), armed: armed, lost: lost}
			})
			hold, err := l.a.db.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Rollback(ctx)
			// The session's row held for update: the record's foreign key
			// check waits for it, a read does not. (A lock on the table
			// would hold up the statement's parse, before it is sent
			// whole.)
			if _, err := hold.Exec(ctx, `SELECT 1 FROM sessions WHERE tenant = $1 AND id = 's' FOR UPDATE`, l.a.tenant); err != nil {
				t.Fatal(err)
			}
			armed.Store(true)
			if err := c.write(ctx, cut); !unavailable(err) {
				t.Fatalf("%s whose connection was lost after its statement = %v; want the database unavailable", c.what, err)
			}
			if armed.Load() {
				t.Fatalf("the statement of %s never carried its mark, so nothing was cut, which tests nothing", c.what)
			}
			early := l.heard(permissionsChanged, 300*time.Millisecond)
			if n := rows(t, l.a, "permission_log"); n != 0 {
				t.Fatalf("%d permission records stored while the log was held, want none (%s waits uncommitted), which tests nothing", n, c.what)
			}
			if err := hold.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			l.waitForRows("permission_log", 1, "permission records once the session's row was let go ("+c.what+" in doubt committed)")
			if !l.heard(permissionsChanged, heardWithin) {
				t.Fatalf("the other replica did not hear within %v of %s committed after its answer was lost (heard of it before its commit, when a read found nothing: %v)", heardWithin, c.what, early)
			}
			if early {
				t.Errorf("the other replica heard of %s in doubt before it was committed: a read then finds nothing", c.what)
			}
		})
	}
}
