package coordination_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestAnAnswerInAnotherSessionReleasesNoAsk: an ask's id answered in
// another session of the same tenant (the file store) is no request there,
// and leaves the ask pending in its own; a forged id, a path among them,
// is none either.
func TestAnAnswerInAnotherSessionReleasesNoAsk(t *testing.T) {
	svc := askService(t.TempDir(), nil)
	ctx := context.Background()
	mine, other := stepSession(t, svc).ID, stepSession(t, svc).ID
	now := time.Now().UTC()
	ask := permissions.ApprovalRequest{ID: permissions.NewRequestID(), Session: mine, Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: permissions.RiskExternal, Rule: "role workspace",
		Asked: now, Expires: now.Add(time.Minute)}
	writeRequest(t, coordination.DirOf(svc.Store(), mine), ask)
	for _, id := range []string{ask.ID, "../" + filepath.Base(coordination.DirOf(svc.Store(), mine)) + "/requests/" + ask.ID, "../../x"} {
		if err := svc.Approve(ctx, other, id, true, "ops"); !errors.Is(err, permissions.ErrNoRequest) {
			t.Errorf("approving %q in session %s: %v; want no such request", id, other, err)
		}
	}
	if pending, _ := svc.PendingApprovals(ctx, mine); len(pending) != 1 || pending[0].ID != ask.ID {
		t.Fatalf("session %s's asks after answers elsewhere: %+v; want its ask still pending", mine, pending)
	}
	if err := svc.Approve(ctx, mine, ask.ID, false, "ops"); err != nil {
		t.Errorf("the ask's own session could not answer it: %v", err)
	}
}
