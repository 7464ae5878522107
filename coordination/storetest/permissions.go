package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// PermissionCases pin the permission audit (coordination.PermissionLog)
// and, for a store that keeps it as data, the approval handshake
// (coordination.ApprovalBox); a store without the interface skips them.
var PermissionCases = []Case{
	{"PermissionDecisionsRoundTripInOrder", testPermissionLog},
	{"AnApprovalIsPendingUntilItsFirstAnswer", testApprovalHandshake},
	{"RacingAnswersLeaveOneStanding", testApprovalRace},
	{"ALapsedAskIsNeitherPendingNorApprovable", testApprovalLapse},
	{"AnAskHoldingANulLeavesEveryAskReadable", testApprovalNul},
}

func permissionLog(t *testing.T, st coordination.Store) coordination.PermissionLog {
	log, ok := st.(coordination.PermissionLog)
	if !ok {
		t.Skip("the store keeps no permission log")
	}
	return log
}

func approvalBox(t *testing.T, st coordination.Store) coordination.ApprovalBox {
	box, ok := st.(coordination.ApprovalBox)
	if !ok {
		t.Skip("the store keeps no approval handshake as data (the file store keeps files in the session directory)")
	}
	return box
}

// decisions are three records of different agents and outcomes.
func decisions() []permissions.Record {
	at := ms(time.Date(2026, 3, 20, 22, 32, 3, 0, time.UTC))
	return []permissions.Record{
		{Time: at, Agent: "agent_a", Step: 1, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "go test ./..."}, Risk: permissions.RiskLocal, Verdict: permissions.Allow, Rule: "role workspace", Outcome: permissions.Allowed},
		{Time: at.Add(time.Second), Agent: "agent_b", Step: 2, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "rm -rf /"}, Risk: permissions.RiskCatastrophic, Verdict: permissions.Deny, Rule: "floor: recursive removal", Floor: true, Outcome: permissions.Denied},
		{Time: at.Add(2 * time.Second), Agent: "agent_a", Step: 3, Tool: "run_command", Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal, Verdict: permissions.Ask, Rule: "role workspace", Outcome: permissions.Approved, By: "file handshake (massgen-mcp approve by ops)", Request: "0a1b2c3d4e"},
	}
}

func testPermissionLog(t *testing.T, st coordination.Store) {
	log := permissionLog(t, st)
	ctx := context.Background()
	create(t, st, "s1")
	create(t, st, "s2")
	if got, err := log.Permissions(ctx, "s1"); err != nil || len(got) != 0 {
		t.Fatalf("a session that decided nothing has %v (%v)", got, err)
	}
	want := decisions()
	for _, r := range want {
		if err := log.AppendPermission(ctx, "s1", r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := log.Permissions(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the permission log reads back\n%+v\nwant\n%+v", got, want)
	}
	if other, _ := log.Permissions(ctx, "s2"); len(other) != 0 {
		t.Errorf("another session's log holds %d decisions", len(other))
	}
	if err := log.AppendPermission(ctx, "nope", want[0]); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("appending to an unknown session = %v, want ErrSessionNotFound", err)
	}
}

func request(id string, asked time.Time) permissions.ApprovalRequest {
	return permissions.ApprovalRequest{ID: id, Session: "s1", Agent: "agent_a", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Risk: permissions.RiskExternal,
		Rule: "role workspace", Asked: asked, Expires: asked.Add(5 * time.Minute)}
}

func testApprovalHandshake(t *testing.T, st coordination.Store) {
	box := approvalBox(t, st)
	ctx := context.Background()
	create(t, st, "s1")
	at := ms(time.Now())
	first, second := request("bbbb000001", at), request("aaaa000002", at.Add(time.Second))
	for _, r := range []permissions.ApprovalRequest{second, first} {
		if err := box.RequestApproval(ctx, "s1", r); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := box.PendingApprovals(ctx, "s1")
	if err != nil || len(pending) != 2 || !reflect.DeepEqual(pending[0], first) || pending[1].ID != second.ID {
		t.Fatalf("pending = %+v (%v), want the two requests, oldest first", pending, err)
	}
	if _, ok, err := box.ApprovalAnswer(ctx, "s1", first.ID); ok || err != nil {
		t.Fatalf("an unanswered request has an answer (%v, %v)", ok, err)
	}
	yes := permissions.ApprovalResponse{ID: first.ID, Approve: true, By: "massgen-mcp approve by ops", At: at.Add(2 * time.Second)}
	if err := box.AnswerApproval(ctx, "s1", yes); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := box.ApprovalAnswer(ctx, "s1", first.ID); !ok || err != nil || !reflect.DeepEqual(got, yes) {
		t.Fatalf("the answer reads back %+v (%v, %v), want %+v", got, ok, err, yes)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: first.ID, By: "timeout", At: at}); !errors.Is(err, permissions.ErrAnswered) {
		t.Errorf("a second answer = %v, want ErrAnswered", err)
	}
	if got, _, _ := box.ApprovalAnswer(ctx, "s1", first.ID); !got.Approve {
		t.Error("a second answer replaced the first")
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: "cccc000003", Approve: true, At: at}); !errors.Is(err, permissions.ErrNoRequest) {
		t.Errorf("answering a request nobody made = %v, want ErrNoRequest", err)
	}
	if pending, _ := box.PendingApprovals(ctx, "s1"); len(pending) != 1 || pending[0].ID != second.ID {
		t.Errorf("pending after one answer = %+v", pending)
	}
	if err := box.RequestApproval(ctx, "nope", first); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("a request in an unknown session = %v, want ErrSessionNotFound", err)
	}
}

// testApprovalRace: a person and the timeout (or two people) answering at
// once leave exactly one answer, the one that was told it stood.
func testApprovalRace(t *testing.T, st coordination.Store) {
	box := approvalBox(t, st)
	ctx := context.Background()
	create(t, st, "s1")
	req := request("dddd000004", ms(time.Now()))
	if err := box.RequestApproval(ctx, "s1", req); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	won := make(chan bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: req.ID, Approve: i%2 == 0, By: "racer", At: ms(time.Now())})
			if err != nil && !errors.Is(err, permissions.ErrAnswered) {
				t.Error(err)
			}
			if err == nil {
				won <- i%2 == 0
			}
		}()
	}
	wg.Wait()
	close(won)
	var winners []bool
	for w := range won {
		winners = append(winners, w)
	}
	got, ok, err := box.ApprovalAnswer(ctx, "s1", req.ID)
	if len(winners) != 1 || !ok || err != nil || got.Approve != winners[0] {
		t.Fatalf("%d answers stood (%v); the stored one is %+v (%v, %v)", len(winners), winners, got, ok, err)
	}
}

// refusal is the permission log's record of r refused in its gone asker's
// stead, as a caller of ExpireApprovals makes it.
func refusal(r permissions.ApprovalRequest) permissions.Record {
	return permissions.Record{Time: ms(time.Date(2026, 3, 20, 22, 40, 0, 0, time.UTC)), Agent: r.Agent, Step: r.Step, Tool: r.Tool,
		Action: r.Action, Risk: r.Risk, Verdict: permissions.Ask, Rule: r.Rule, Outcome: permissions.Refused,
		By: "dummy handshake (timeout: the asker was gone)", Request: r.ID}
}

// testApprovalLapse: a request still open more than MaxClockSkew past its
// expiry had an asker that died before refusing it. It is not pending,
// takes no approval, and ExpireApprovals refuses it once, saying why, and
// records the refusal in the permission log with it; a late asker's own
// refusal of one is stored. One expired less than MaxClockSkew ago may be
// a live asker's whose clock is behind: still pending.
func testApprovalLapse(t *testing.T, st coordination.Store) {
	box := approvalBox(t, st)
	ctx := context.Background()
	create(t, st, "s1")
	now := ms(time.Now())
	lapsed := func(id string) permissions.ApprovalRequest {
		r := request(id, now.Add(-10*time.Second))
		r.Expires = now.Add(-9 * time.Second)
		return r
	}
	dead, late, skewed := lapsed("eeee000005"), lapsed("ffff000006"), request("abab000007", now.Add(-time.Minute))
	skewed.Expires = now.Add(-coordination.MaxClockSkew / 4)
	for _, r := range []permissions.ApprovalRequest{dead, late, skewed} {
		if err := box.RequestApproval(ctx, "s1", r); err != nil {
			t.Fatal(err)
		}
	}
	if pending, err := box.PendingApprovals(ctx, "s1"); err != nil || len(pending) != 1 || pending[0].ID != skewed.ID {
		t.Fatalf("pending = %+v (%v), want only the ask within the clock skew of its expiry", pending, err)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: dead.ID, Approve: true, By: "ops", At: now}); !errors.Is(err, permissions.ErrExpired) {
		t.Errorf("approving a lapsed ask = %v, want ErrExpired", err)
	}
	if _, ok, _ := box.ApprovalAnswer(ctx, "s1", dead.ID); ok {
		t.Error("the approval of a lapsed ask was stored")
	}
	own := permissions.ApprovalResponse{ID: late.ID, By: permissions.ByTimeout, At: now}
	if err := box.AnswerApproval(ctx, "s1", own); err != nil {
		t.Errorf("a late asker's own refusal = %v, want it stored", err)
	}
	for i, want := range [][]string{{dead.ID}, nil} {
		got, err := box.ExpireApprovals(ctx, "s1", refusal)
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if err != nil || !reflect.DeepEqual(ids, want) {
			t.Fatalf("ExpireApprovals #%d refused %v (%v), want %v", i+1, ids, err, want)
		}
		if i == 0 && !reflect.DeepEqual(got[0], dead) {
			t.Errorf("the refused request reads back %+v, want %+v", got[0], dead)
		}
	}
	if log, ok := st.(coordination.PermissionLog); ok {
		// Recorded with the refusal, once: the caller records nothing.
		if recs, err := log.Permissions(ctx, "s1"); err != nil || !reflect.DeepEqual(recs, []permissions.Record{refusal(dead)}) {
			t.Errorf("the permission log holds %+v (%v), want the one refusal of the lapsed ask", recs, err)
		}
	}
	if r, ok, err := box.ApprovalAnswer(ctx, "s1", dead.ID); !ok || err != nil || r.Approve || r.By != permissions.ByTimeout || r.Reason != permissions.AskerGone {
		t.Errorf("the lapsed ask's answer is %+v (%v, %v), want refused by timeout for its gone asker", r, ok, err)
	}
	if r, _, _ := box.ApprovalAnswer(ctx, "s1", late.ID); r.Reason != "" {
		t.Errorf("the late asker's own refusal was replaced by %+v", r)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: dead.ID, By: "ops", At: now}); !errors.Is(err, permissions.ErrExpired) {
		t.Errorf("denying an ask refused at its timeout = %v, want ErrExpired", err)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: skewed.ID, Approve: true, By: "ops", At: now}); err != nil {
		t.Errorf("approving an ask within the clock skew of its expiry = %v, want it stored", err)
	}
	// An ask its step's end refused (the run killed while it waited) is
	// closed as one its timeout refused: nobody waits on it, and no person
	// answered it.
	ended := request("cdcd000008", now.Add(time.Hour))
	if err := box.RequestApproval(ctx, "s1", ended); err != nil {
		t.Fatal(err)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: ended.ID, By: permissions.ByStepEnded, At: now}); err != nil {
		t.Fatalf("the step's end refusing its ask = %v", err)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: ended.ID, Approve: true, By: "ops", At: now}); !errors.Is(err, permissions.ErrExpired) {
		t.Errorf("approving an ask its step's end refused = %v, want ErrExpired (nobody waits on it; no person answered it)", err)
	}
}

// testApprovalNul: an ask whose action a model wrote with a NUL in it (a
// command's text, U+0000) is stored, listed and answered like any other,
// and the session's other asks stay listed. On PostgreSQL the request's
// JSON then held \u0000, which the lapse check (request->>'expires')
// cannot decode: every read of the session's asks failed, and the web
// view and `massgen-mcp approve`, which take an error for none pending,
// showed no ask of the session again.
func testApprovalNul(t *testing.T, st coordination.Store) {
	box := approvalBox(t, st)
	ctx := context.Background()
	create(t, st, "s1")
	at := ms(time.Now())
	nul, plain := request("a0a0000009", at), request("b0b0000010", at.Add(time.Second))
	nul.Tool, nul.Action = "run\x00command", permissions.Action{Kind: permissions.Exec, Target: "printf 'a\x00b'"}
	for _, r := range []permissions.ApprovalRequest{nul, plain} {
		if err := box.RequestApproval(ctx, "s1", r); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := box.PendingApprovals(ctx, "s1")
	if err != nil || len(pending) != 2 || pending[0].ID != nul.ID || pending[1].ID != plain.ID {
		t.Fatalf("pending = %+v (%v), want both asks", pending, err)
	}
	if got := pending[0].Action.Target; got != nul.Action.Target && got != "printf 'a\uFFFDb'" {
		t.Errorf("the ask's command reads back %q, want it as asked or its NUL shown as U+FFFD", got)
	}
	if lapsed, err := box.ExpireApprovals(ctx, "s1", refusal); err != nil || len(lapsed) != 0 {
		t.Errorf("ExpireApprovals = %+v (%v), want none refused and no error", lapsed, err)
	}
	no := permissions.ApprovalResponse{ID: nul.ID, By: "ops", Reason: "not \x00 that", At: at}
	if err := box.AnswerApproval(ctx, "s1", no); err != nil {
		t.Fatalf("answering the ask = %v", err)
	}
	if r, ok, err := box.ApprovalAnswer(ctx, "s1", nul.ID); !ok || err != nil || r.Approve || r.By != "ops" {
		t.Errorf("its answer reads back %+v (%v, %v)", r, ok, err)
	}
	if err := box.AnswerApproval(ctx, "s1", permissions.ApprovalResponse{ID: nul.ID, Approve: true, By: "ops", At: at}); !errors.Is(err, permissions.ErrAnswered) {
		t.Errorf("a second answer = %v, want ErrAnswered", err)
	}
	if pending, err := box.PendingApprovals(ctx, "s1"); err != nil || len(pending) != 1 || pending[0].ID != plain.ID {
		t.Errorf("pending after its answer = %+v (%v), want the other ask", pending, err)
	}
}
