package coordination_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAnAskWhoseProcessDiedIsNotLeftPendingInTheFileStore: the file
// handshake's twin of TestAnAskWhoseReplicaDiedIsNotLeftPendingForAPersonToApprove.
// A server killed while its step asked leaves requests/<id>.json with no
// response; past its expiry it is neither pending nor approvable, and is
// refused in its asker's stead, once, in the audit.
func TestAnAskWhoseProcessDiedIsNotLeftPendingInTheFileStore(t *testing.T) {
	state := t.TempDir()
	svc := coordination.NewService(filestore.New(filepath.Join(state, "sessions")), coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, StateDir: state})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	asked := time.Now().Add(-10 * time.Second).UTC()
	dead := permissions.ApprovalRequest{ID: permissions.NewRequestID(), Session: s.ID, Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: "external",
		Rule: "role workspace", Step: 2, Asked: asked, Expires: asked.Add(time.Second)}
	writeRequest(t, coordination.DirOf(svc.Store(), s.ID), dead)
	if err := svc.Approve(ctx, s.ID, dead.ID, true, "ops"); err == nil {
		t.Errorf("an approval of ask %s, expired with no step waiting for it, was accepted", dead.ID)
	}
	if pending, _ := svc.PendingApprovals(ctx, s.ID); len(pending) != 0 {
		t.Errorf("%d asks pending, the first %s: want none", len(pending), pending[0].ID)
	}
	checkDeadAskRefused(t, svc, s.ID, dead)
}

// writeRequest leaves a request in a session directory as AskFile writes
// it, with no asker waiting.
func writeRequest(t *testing.T, dir string, req permissions.ApprovalRequest) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "requests"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "requests", req.ID+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
