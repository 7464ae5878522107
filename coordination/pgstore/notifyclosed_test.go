package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestAPermissionChangeInDoubtIsLookedForOnceMoreAtClose: a process that
// closes its store just after a permission change's answer was lost (the
// CLI's approve or status, whose look at the pending asks expires the
// lapsed ones, exits at once) must still tell the other replicas of it
// when it committed. Close ends the look; ended before its first look, it
// told nobody, where notifyInDoubt used to tell them at once.
func TestAPermissionChangeInDoubtIsLookedForOnceMoreAtClose(t *testing.T) {
	l := newLostAnswer(t)
	ctx := context.Background()
	const agent = "agent-whose-record-was-lost-at-close"
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
	cut.db.Close()
	l.mustHear(permissionsChanged, "a decision committed with its answer lost, its writer closed at once")
}
