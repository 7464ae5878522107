package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestARunRefusedAtTheLimitLeavesItsSessionCancelled: run_team creates its
// session, then finds the server at its limit of runs. The session read
// running for ever, with nothing running it, on every replica; it now reads
// cancelled, the refusal names it, and run_team{session_id} runs it later.
func TestARunRefusedAtTheLimitLeavesItsSessionCancelled(t *testing.T) {
	srv := newMemServer(t, Options{MaxRuns: 1})
	c := inProcess(t, srv, false)
	var first coordination_result
	decode(t, callTool(t, c, "run_team", `{"task":"What is 2+2?","models":["sim:latency=5s","sim:latency=5s"],"wait":false}`), &first)
	res := callTool(t, c, "run_team", `{"session_id":"refused","task":"What is 3+3?","models":["sim","sim"]}`)
	wantError(t, res, "too_many_runs", `run_team{session_id: "refused"}`)
	var st StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"refused"}`), &st)
	if st.Result == nil || st.Result.Status != coordination.StatusCancelled {
		t.Fatalf("the refused session reads %+v, want cancelled", st.Result)
	}
	decode(t, callTool(t, c, "cancel_team", fmt.Sprintf(`{"session_id":%q}`, first.SessionID)), &coordination_result{})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res = callTool(t, c, "run_team", `{"session_id":"refused","wait":true}`)
		if !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refused session never ran once a slot was free: %s", text(res))
		}
	}
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished {
		t.Fatalf("the refused session, run later: %s", text(res))
	}
}

// TestAReplicaFollowsARunHeldElsewhereWithoutARunSlot: a run held by
// replica A is joined through replica B, whatever B runs itself. B refused
// run_team{session_id, wait: false} as session_running (with a fix line
// saying to cancel it), and at its limit of runs refused even to follow.
func TestAReplicaFollowsARunHeldElsewhereWithoutARunSlot(t *testing.T) {
	servers := pgServersWith(t, []Options{{}, {MaxRuns: 1}})
	ctx := context.Background()
	a := servers[0].Service()
	if _, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong:latency=300ms", "sim/strong:latency=300ms"}, SessionID: "on_a"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, "on_a"); err != nil {
		t.Fatal(err)
	}
	b := inProcess(t, servers[1], false)
	var st coordination.TeamResult
	decode(t, callTool(t, b, "run_team", `{"session_id":"on_a","wait":false}`), &st)
	if st.Status != coordination.StatusRunning {
		t.Fatalf("run_team without waiting, through B: %+v", st.Status)
	}
	decode(t, callTool(t, b, "run_team", `{"task":"What is 2+2?","models":["sim:latency=5s","sim:latency=5s"],"wait":false}`), &coordination_result{})
	decode(t, callTool(t, b, "run_team", `{"session_id":"on_a","wait":false}`), &st)
	if st.Status != coordination.StatusRunning {
		t.Fatalf("run_team without waiting, through B at its limit: %+v", st.Status)
	}
	res := callTool(t, b, "run_team", `{"session_id":"on_a","wait":true}`)
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished {
		t.Fatalf("following A's run through B at its limit: %s", text(res))
	}
}

// TestAWaitIsNotCutByAQuestionTheCallerCannotAsk: a run_team{wait: true}
// from a client that cannot elicit waits for the run's end, though the
// session has an open question (an agent's ask for approval, asked of
// another client). It returned "running" at once, and again on every call.
func TestAWaitIsNotCutByAQuestionTheCallerCannotAsk(t *testing.T) {
	servers := pgServers(t, 1)
	svc := servers[0].Service()
	ctx := context.Background()
	if _, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong:latency=700ms", "sim/strong:latency=700ms"}, SessionID: "asked_elsewhere"}); err != nil {
		t.Fatal(err)
	}
	q := coordination.Question{ID: "human_approval", Message: "Agent agent_a asks to run run_command. Approve?", Agent: "agent_a", Asked: time.Now()}
	if err := svc.Store().(coordination.QuestionBox).PostQuestion(ctx, "asked_elsewhere", q); err != nil {
		t.Fatal(err)
	}
	// Asked of the person through another client: the run's own asker.
	if _, _, err := svc.Start(providers.WithAsker(ctx, svc.SharedAsker("asked_elsewhere")), "asked_elsewhere"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Store().(coordination.QuestionBox).PostQuestion(ctx, "asked_elsewhere", coordination.Question{ID: "human_live", Message: "Approve?", Agent: "agent_b", Asked: time.Now()}); err != nil {
		t.Fatal(err)
	}
	c := inProcess(t, servers[0], false)
	res := callTool(t, c, "run_team", `{"session_id":"asked_elsewhere","wait":true}`)
	if strings.Contains(text(res), `"status":"running"`) || res.IsError {
		t.Fatalf("the wait ended with the run going: %s", text(res))
	}
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished {
		t.Fatalf("the wait: %s", text(res))
	}
}

// TestACallThatHasAskedItsRoundsReturnsTheRun: a call on its last asking
// round meets an open question. It returns the run as it stands (its next
// call asks), rather than wait past a question it will not ask: the person
// was never asked, and the step ran out its timeout.
func TestACallThatHasAskedItsRoundsReturnsTheRun(t *testing.T) {
	srv := newMemServer(t, Options{})
	svc := srv.Service()
	ctx := context.Background()
	if _, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", SessionID: "rounds_asked",
		Agents: []coordination.Agent{{ID: "me", Model: "human"}, {ID: "bot_a", Model: "sim/strong"}, {ID: "bot_b", Model: "sim/strong"}}}); err != nil {
		t.Fatal(err)
	}
	release := srv.handler.questions.watch(DefaultTenant, "rounds_asked")
	defer release()
	posted := srv.handler.questions.posted(DefaultTenant, "rounds_asked")
	if _, _, err := svc.Start(providers.WithAsker(ctx, srv.handler.questions.asker(DefaultTenant, "rounds_asked")), "rounds_asked"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("the person was never asked")
	}
	url := httpServer(t, srv, HTTPOptions{}).URL
	meta := modernMeta(false)
	meta[mcpgo.MetaKeyClientCapabilities] = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "run_team", "arguments": map[string]any{"session_id": "rounds_asked", "wait": true},
		"requestState": roundState{Session: "rounds_asked", Round: maxAsksPerCall}.String(), "_meta": meta}})
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcpgo.HeaderProtocolVersion, mcpgo.LATEST_PROTOCOL_VERSION)
	req.Header.Set(mcpgo.HeaderMethod, "tools/call")
	req.Header.Set(mcpgo.HeaderName, "run_team")
	// Bounded, so a call that waits past the question fails the test.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("the call that has asked its rounds did not return: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), "running") {
		t.Fatalf("the call returned %s; want the run as it stands", raw)
	}
	if _, err := svc.Cancel(ctx, "rounds_asked"); err != nil {
		t.Fatal(err)
	}
}

// TestARunRefusedAtTheLimitSaysWhenToTryAgain: too_many_runs said to wait
// for a team to end but not how long, so a client retried at once (and was
// refused again) or gave up. The refusal carries a retry hint: seconds in
// its _meta (massgen/retry_after_seconds) and the same figure in its fix
// line, no more than the 60 s an HTTP client's retry honours.
func TestARunRefusedAtTheLimitSaysWhenToTryAgain(t *testing.T) {
	srv := newMemServer(t, Options{MaxRuns: 1})
	c := inProcess(t, srv, false)
	decode(t, callTool(t, c, "run_team", `{"task":"What is 2+2?","models":["sim:latency=5s","sim:latency=5s"],"wait":false}`), &coordination_result{})
	res := callTool(t, c, "run_team", `{"task":"What is 3+3?","models":["sim","sim"]}`)
	wantError(t, res, "too_many_runs")
	var secs int
	if res.Meta != nil {
		raw, _ := json.Marshal(res.Meta.AdditionalFields["massgen/retry_after_seconds"])
		_ = json.Unmarshal(raw, &secs)
	}
	if secs < 1 || secs > 60 {
		t.Fatalf("massgen/retry_after_seconds = %d, want 1 to 60 s; meta %+v", secs, res.Meta)
	}
	if msg := text(res); !strings.Contains(msg, fmt.Sprintf("%d s", secs)) {
		t.Errorf("the fix line does not say to call again in %d s: %s", secs, msg)
	}
}
