package pgstore

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestAnApprovalAnswerFoundOnRetryIsHeardByTheOtherReplicas: an answer to
// an ask commits, then notifies (notifyCommitted); one whose connection was
// lost after its statement reached the server committed unheard, and its
// caller (`massgen-mcp approve`, a web page) was told the database was
// unavailable. Its retry finds the answer standing (permissions.ErrAnswered)
// and must tell the other replicas then: the pages there show the ask as
// pending until they hear of it.
func TestAnApprovalAnswerFoundOnRetryIsHeardByTheOtherReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	at := ms(time.Now())
	req := permissions.ApprovalRequest{ID: "aaaa000001", Session: "s", Agent: "agent_a", Tool: "dummy_tool",
		Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal,
		Rule: "role workspace", Asked: at, Expires: at.Add(5 * time.Minute)}
	// The watch begins before the ask, whose own NOTIFY is heard first:
	// begun after, it may hear that one still on its way, and take it for
	// the lost answer's.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	changes, err := a.Watch(wctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RequestApproval(ctx, "s", req); err != nil {
		t.Fatal(err)
	}
	for heard, asked := false, time.After(heardWithin); !heard; {
		select {
		case c := <-changes:
			heard = c.Permissions
		case <-asked:
			t.Fatalf("the other replica did not hear of the ask within %v", heardWithin)
		}
	}
	answered := func() bool {
		_, ok, err := a.ApprovalAnswer(ctx, "s", req.ID)
		return err == nil && ok
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	armed := &atomic.Bool{}
	const by = "dummy-approver-whose-answer-was-lost"
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(by), committed: answered}, armed: armed}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	cut := &Store{db: newDB(pool, a.db.channel, Options{}), tenant: a.tenant}

	yes := permissions.ApprovalResponse{ID: req.ID, Approve: true, By: by, At: at.Add(time.Second)}
	armed.Store(true)
	if err := cut.AnswerApproval(ctx, "s", yes); !unavailable(err) {
		t.Fatalf("an answer whose connection was lost after its statement = %v; want the database unavailable", err)
	}
	if !answered() {
		t.Fatal("the cut answer was not stored, which tests nothing")
	}
	select {
	case c := <-changes:
		if c.Permissions {
			t.Fatal("the other replica heard an answer whose NOTIFY was never sent, which tests nothing")
		}
	case <-time.After(300 * time.Millisecond):
	}
	if err := cut.AnswerApproval(ctx, "s", yes); !errors.Is(err, permissions.ErrAnswered) {
		t.Fatalf("the retry of an answer committed before its connection was lost = %v; want it found answered", err)
	}
	deadline := time.After(heardWithin)
	for {
		select {
		case c := <-changes:
			if c.Permissions {
				return
			}
		case <-deadline:
			t.Fatalf("the other replica did not hear within %v of an answer its retry found standing (no NOTIFY was sent for it)", heardWithin)
		}
	}
}
