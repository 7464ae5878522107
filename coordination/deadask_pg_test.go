package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAnAskWhoseReplicaDiedIsNotLeftPendingForAPersonToApprove: replica A's
// step asked a person (an approval request row) and A was SIGKILLed before
// the ask's timeout, so nobody wrote the fail-closed refusal. Its request
// must not stay pending past its expiry: status and the live view list it
// (the live view picks the oldest by default, so `y` answers it, not the
// ask of the step that replica B has taken over), and an approval of it
// is accepted though no step waits for it.
func TestAnAskWhoseReplicaDiedIsNotLeftPendingForAPersonToApprove(t *testing.T) {
	dsn := pgtest.Schema(t)
	deadStore := pgTenant(t, dsn)
	b := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	ctx := context.Background()
	s := stepSession(t, b)
	// What A's guard wrote before it died (coordination/permissions.go
	// answer → askBox → RequestApproval): a 1 s ask, asked 10 s ago.
	dead := deadAsk(s.ID)
	if err := deadStore.(coordination.ApprovalBox).RequestApproval(ctx, s.ID, dead); err != nil {
		t.Fatal(err)
	}
	pending, err := b.PendingApprovals(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 {
		t.Errorf("replica B lists %d pending asks, the first %s (expired %s ago, its asker dead): want none",
			len(pending), pending[0].ID, time.Since(pending[0].Expires).Round(time.Second))
	}
	if err := b.Approve(ctx, s.ID, dead.ID, true, "ops"); err == nil {
		t.Errorf("an approval of ask %s, expired with no step waiting for it, was accepted", dead.ID)
	}
	checkDeadAskRefused(t, b, s.ID, dead)
}

// checkDeadAskRefused: a dead asker's lapsed ask was refused in its stead
// once, the audit saying so, and another answer is refused with an error
// a person can act on.
func checkDeadAskRefused(t *testing.T, svc *coordination.Service, session string, dead permissions.ApprovalRequest) {
	t.Helper()
	ctx := context.Background()
	err := svc.Approve(ctx, session, dead.ID, false, "ops")
	if !errors.Is(err, permissions.ErrExpired) || !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "no longer waits") {
		t.Errorf("answering the dead ask again = %v, want ErrExpired saying its step no longer waits", err)
	}
	recs, err := svc.PermissionLog(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	var got []permissions.Record
	for _, r := range recs {
		if r.Request == dead.ID {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].Outcome != permissions.Refused || !strings.Contains(got[0].By, "timeout") || !strings.Contains(got[0].By, "gone") ||
		got[0].Agent != dead.Agent || got[0].Step != dead.Step || got[0].Action != dead.Action || got[0].Verdict != permissions.Ask {
		t.Errorf("the audit holds %+v for the dead ask; want one refusal by its timeout, naming its asker gone", got)
	}
}
