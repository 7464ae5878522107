package pgstore

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

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
	l := newLostAnswer(t)
	ctx := context.Background()
	at := ms(time.Now())
	req := permissions.ApprovalRequest{ID: "aaaa000001", Session: "s", Agent: "agent_a", Tool: "dummy_tool",
		Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal,
		Rule: "role workspace", Asked: at, Expires: at.Add(5 * time.Minute)}
	// The ask's own NOTIFY is heard first: left on its way, it could be
	// taken for the lost answer's.
	if err := l.a.RequestApproval(ctx, "s", req); err != nil {
		t.Fatal(err)
	}
	l.mustHear(permissionsChanged, "the ask")
	answered := func() bool {
		_, ok, err := l.a.ApprovalAnswer(ctx, "s", req.ID)
		return err == nil && ok
	}
	armed := &atomic.Bool{}
	const by = "dummy-approver-whose-answer-was-lost"
	cut := l.beside(func(c net.Conn) net.Conn {
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(by), committed: answered}, armed: armed}
	})
	yes := permissions.ApprovalResponse{ID: req.ID, Approve: true, By: by, At: at.Add(time.Second)}
	armed.Store(true)
	if err := cut.AnswerApproval(ctx, "s", yes); !unavailable(err) {
		t.Fatalf("an answer whose connection was lost after its statement = %v; want the database unavailable", err)
	}
	if !answered() {
		t.Fatal("the cut answer was not stored, which tests nothing")
	}
	l.notYetHeard(permissionsChanged, "an answer")
	if err := cut.AnswerApproval(ctx, "s", yes); !errors.Is(err, permissions.ErrAnswered) {
		t.Fatalf("the retry of an answer committed before its connection was lost = %v; want it found answered", err)
	}
	l.mustHear(permissionsChanged, "an answer its retry found standing")
}
