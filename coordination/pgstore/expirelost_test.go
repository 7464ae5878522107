package pgstore

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestALapsedAskRefusedWithItsAnswerLostIsStillInThePermissionLog: a
// reader refuses an ask whose asker died (ExpireApprovals), and the
// refusal belongs in the session's permission log, the user's record of
// what was refused. When the refusal's commit lands but its answer is lost
// with the connection, the reader is told the database was unavailable;
// the ask is no longer pending, so no later expiry returns it again. The
// log must hold its refusal all the same, once.
func TestALapsedAskRefusedWithItsAnswerLostIsStillInThePermissionLog(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	// What a replica's guard wrote before it was killed: a 1 s ask,
	// asked 10 s ago.
	asked := ms(time.Now().Add(-10 * time.Second))
	dead := permissions.ApprovalRequest{ID: "dead000001", Session: "s", Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: permissions.RiskExternal,
		Rule: "role workspace", Step: 2, Asked: asked, Expires: asked.Add(time.Second)}
	if err := a.RequestApproval(ctx, "s", dead); err != nil {
		t.Fatal(err)
	}
	refused := func() bool {
		_, ok, err := a.ApprovalAnswer(ctx, "s", dead.ID)
		return err == nil && ok
	}
	// The refusal's write is the one that carries its reason.
	armed := &atomic.Bool{}
	cut := besideOn(t, dsn, a, func(c net.Conn) net.Conn {
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(permissions.AskerGone), committed: refused}, armed: armed}
	})
	svc := coordination.NewService(cut, coordination.Options{Logger: zerolog.Nop()})

	armed.Store(true)
	if pending, err := svc.PendingApprovals(ctx, "s"); err != nil || len(pending) != 0 {
		t.Fatalf("pending = %+v (%v), want the dead ask not listed", pending, err)
	}
	if armed.Load() {
		t.Fatal("the expiry's write never carried the refusal's reason, so nothing was cut, which tests nothing")
	}
	if !refused() {
		t.Fatal("the cut refusal was not stored, which tests nothing")
	}
	// A later look finds nothing more to refuse.
	if _, err := svc.PendingApprovals(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	recs, err := svc.PermissionLog(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []permissions.Record
	for _, r := range recs {
		if r.Request == dead.ID {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].Outcome != permissions.Refused || !strings.Contains(got[0].By, "gone") ||
		got[0].Agent != dead.Agent || got[0].Step != dead.Step || got[0].Action != dead.Action {
		t.Errorf("the permission log holds %+v for the ask refused with its answer lost; want its one refusal, its asker gone", got)
	}
}
