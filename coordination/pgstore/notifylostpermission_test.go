package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestAPermissionDecisionWithItsAnswerLostIsHeardByTheOtherReplicas: a
// permission decision commits, then notifies (notifyCommitted); one whose
// connection was lost after its statement reached the server committed
// unheard, and its caller (the guard's audit) was told the database was
// unavailable and only logs it: nobody retries a record. The other
// replicas must hear of it all the same, or their views of the session's
// permissions miss it until its next change.
func TestAPermissionDecisionWithItsAnswerLostIsHeardByTheOtherReplicas(t *testing.T) {
	l := newLostAnswer(t)
	decisionLost(t, l, "agent-whose-record-was-lost")
	l.mustHear(permissionsChanged, "a decision committed with its answer lost")
}

// decisionLost has a replica beside l's a record a permission decision of
// agent whose answer is lost after its statement reached the server, and
// checks that it committed; it returns that replica.
func decisionLost(t *testing.T, l *lostAnswer, agent string) *Store {
	t.Helper()
	ctx := context.Background()
	armed := &atomic.Bool{}
	cut := l.beside(func(c net.Conn) net.Conn {
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(agent), committed: func() bool { return rows(t, l.a, "permission_log") > 0 }}, armed: armed}
	})
	rec := permissions.Record{Time: time.Now(), Agent: agent, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "go test ./..."},
		Risk: permissions.RiskLocal, Verdict: permissions.Allow, Rule: "role workspace", Outcome: permissions.Allowed}
	armed.Store(true)
	if err := cut.AppendPermission(ctx, "s", rec); !unavailable(err) {
		t.Fatalf("a decision whose connection was lost after its statement = %v; want the database unavailable", err)
	}
	if armed.Load() {
		t.Fatal("the decision's statement never carried its agent, so nothing was cut, which tests nothing")
	}
	if n := rows(t, l.a, "permission_log"); n != 1 {
		t.Fatalf("%d decisions stored after the cut one, want 1 (its statement ran)", n)
	}
	return cut
}
