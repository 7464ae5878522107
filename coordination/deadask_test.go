package coordination_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestAnAskWhoseProcessDiedIsNotLeftPendingInTheFileStore: the file
// handshake's twin of TestAnAskWhoseReplicaDiedIsNotLeftPendingForAPersonToApprove.
// A server killed while its step asked leaves requests/<id>.json with no
// response; past its expiry it is neither pending nor approvable, and is
// refused in its asker's stead, once, in the audit.
func TestAnAskWhoseProcessDiedIsNotLeftPendingInTheFileStore(t *testing.T) {
	svc := askService(t.TempDir(), nil)
	ctx := context.Background()
	s := stepSession(t, svc)
	dead := deadAsk(s.ID)
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

// TestAnAskRefusedForALateAskerIsRecordedOnce: an asker so late to refuse
// its own ask (its clock behind the reader's by more than MaxClockSkew, or
// stalled) that a reader took it for gone and refused it in its stead
// reads that refusal back; the reader recorded it, so the asker's step
// records nothing more: one decision, one line.
func TestAnAskRefusedForALateAskerIsRecordedOnce(t *testing.T) {
	state := t.TempDir()
	asker, ahead := askService(state, nil), askService(state, func() time.Time { return time.Now().Add(time.Minute) })
	ctx := context.Background()
	s := stepSession(t, asker)
	got := make(chan permissions.Record, 1)
	go func() {
		got <- coordination.AskAudited(asker, ctx, s.ID, "agent_a", permissions.Rules{ApprovalTimeoutSeconds: 30},
			permissions.Action{Kind: permissions.Git, Target: "push origin main"})
	}()
	var rec permissions.Record
	for deadline := time.Now().Add(10 * time.Second); rec.Request == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the ask was never answered")
		}
		_, _ = ahead.PendingApprovals(ctx, s.ID)
		select {
		case rec = <-got:
		default:
		}
	}
	if rec.Outcome != permissions.Refused {
		t.Errorf("the late asker's call was %s, want refused", rec.Outcome)
	}
	recs, _ := asker.PermissionLog(ctx, s.ID)
	n := 0
	for _, r := range recs {
		if r.Request == rec.Request {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the audit holds %d records of ask %s, want 1: %+v", n, rec.Request, recs)
	}
}

// deadAsk is the request a server killed while its step asked left behind:
// a 1 s ask of agent_a's step 2, asked 10 s ago, never answered.
func deadAsk(session string) permissions.ApprovalRequest {
	asked := time.Now().Add(-10 * time.Second).UTC()
	return permissions.ApprovalRequest{ID: permissions.NewRequestID(), Session: session, Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: "external",
		Rule: "role workspace", Step: 2, Asked: asked, Expires: asked.Add(time.Second)}
}
