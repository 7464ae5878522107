package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// These tests use the real stdio transport over pipes. mcp-go keeps one stdio
// session per process, so none of them runs in parallel.

// TestStdioAnswersWhileRunTeamBlocks: with more blocking run_team calls than
// mcp-go's default worker pool (5), team_status, step and list_backends
// still answer at once.
func TestStdioAnswersWhileRunTeamBlocks(t *testing.T) {
	s := newMemServer(t, Options{})
	r := serveRaw(t, s)
	slow := []string{"sim:latency=3s", "sim:latency=3s"}
	blocking := map[int]bool{}
	for i := 0; i < 8; i++ {
		blocking[r.callTool("run_team", map[string]any{"task": "What is 6 * 7?", "models": slow, "wait": true}, nil)] = true
	}
	var plain startTeamResult
	id := r.callTool("start_team", map[string]any{"task": "What is 2 + 2?", "models": []string{"sim", "sim"}}, nil)
	decode(t, toolResult(t, r.await(id, blocking)), &plain)

	// Wait until every blocking run is actually running, then ask.
	waitFor(t, func() bool {
		list, _ := s.Service().Sessions(context.Background())
		running := 0
		for _, l := range list {
			if _, ok := s.Service().Running(l.SessionID); ok {
				running++
			}
		}
		return running == 8
	})
	start := time.Now()
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"team_status", map[string]any{"session_id": plain.SessionID}},
		{"step", map[string]any{"session_id": plain.SessionID, "agent_id": "agent_a"}},
		{"list_backends", map[string]any{}},
	} {
		id := r.callTool(call.tool, call.args, nil)
		res := toolResult(t, r.await(id, blocking))
		if res.IsError {
			t.Fatalf("%s failed: %s", call.tool, text(res))
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("team_status, step and list_backends took %s beside 8 blocking run_team calls", d)
	}
	if len(blocking) != 8 {
		t.Errorf("a blocking run_team answered early (%d left)", len(blocking))
	}
}

// await reads until the response to id, skipping notifications and the
// responses to the calls in skip (deleting those that arrive).
func (r *rawStdio) await(id int, skip map[int]bool) wireMsg {
	r.t.Helper()
	for {
		m := r.next()
		if m.ID == nil {
			continue
		}
		if *m.ID == id {
			return m
		}
		if skip[*m.ID] {
			delete(skip, *m.ID)
			continue
		}
		r.t.Fatalf("unexpected response %d while waiting for %d", *m.ID, id)
	}
}

// TestStdinClosingCancelsRunsAndLeavesThemResumable: a run handed back to the
// client and a run still blocking both end cancelled, not cut off, when the
// client goes away; ServeStdio returns nil (the binary exits 0).
func TestStdinClosingCancelsRunsAndLeavesThemResumable(t *testing.T) {
	s := newMemServer(t, Options{})
	r := serveRaw(t, s)
	slow := []string{"sim:latency=5s", "sim:latency=5s"}
	id := r.callTool("run_team", map[string]any{"task": "What is 6 * 7?", "models": slow, "wait": false, "session_id": "handed_back"}, nil)
	var handle coordination.TeamResult
	decode(t, toolResult(t, r.await(id, nil)), &handle)
	r.callTool("run_team", map[string]any{"task": "What is 6 * 7?", "models": slow, "wait": true, "session_id": "blocking"}, nil)
	waitFor(t, func() bool { _, ok := s.Service().Running("blocking"); return ok })

	start := time.Now()
	if err := r.close(); err != nil {
		t.Fatalf("ServeStdio after stdin closed: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutting down took %s; runs must be cancelled, not waited for", d)
	}
	for _, id := range []string{"handed_back", "blocking"} {
		res, err := s.Service().Result(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		// Not a cancel anyone asked for: the process stopping, or (the
		// blocking call's run, as its request may end first) its caller
		// leaving.
		if res.Status != coordination.StatusCancelled || res.CancelReason == "" || strings.Contains(res.CancelReason, "by request") {
			t.Errorf("%s: status %s (%q), want cancelled by the client going away", id, res.Status, res.CancelReason)
		}
		if _, ok := s.Service().Running(id); ok {
			t.Errorf("%s still runs", id)
		}
	}
}

// TestStdioCancellationNotificationCancelsABlockingRun: notifications/cancelled
// for a blocking run_team cancels its run.
func TestStdioCancellationNotificationCancelsABlockingRun(t *testing.T) {
	s := newMemServer(t, Options{})
	r := serveRaw(t, s)
	id := r.callTool("run_team", map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=5s", "sim:latency=5s"}, "wait": true, "session_id": "to_cancel"}, nil)
	waitFor(t, func() bool { _, ok := s.Service().Running("to_cancel"); return ok })
	r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id, "reason": "user"}})
	waitFor(t, func() bool {
		res, err := s.Service().Result(context.Background(), "to_cancel")
		return err == nil && res.Status == coordination.StatusCancelled
	})
	// Recorded as its caller leaving, not as a cancel someone asked for.
	if res, err := s.Service().Result(context.Background(), "to_cancel"); err != nil || !strings.Contains(res.CancelReason, "stopped waiting") {
		t.Fatalf("the cancel reason of a run whose caller left: %+v, %v", res, err)
	}
}

// TestStdioSubscriptionsListenAcknowledgesFirst: over stdio too, a
// subscriptions/listen acknowledgement comes before the listen result
// (mcp-go writes notifications and responses from different goroutines).
func TestStdioSubscriptionsListenAcknowledgesFirst(t *testing.T) {
	r := serveRaw(t, newMemServer(t, Options{}))
	for i := 0; i < 200; i++ {
		id := r.id()
		r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": map[string]any{
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			},
			"notifications": map[string]any{"toolsListChanged": true},
		}})
		ack := r.next()
		var params struct {
			Meta map[string]any `json:"_meta"`
		}
		_ = json.Unmarshal(ack.Params, &params)
		if ack.Method != "notifications/subscriptions/acknowledged" || params.Meta["io.modelcontextprotocol/subscriptionId"] != float64(id) {
			t.Fatalf("listen %d: first message is %s %s %s, want its acknowledgement", id, ack.Method, ack.Params, ack.Result)
		}
		if res := r.next(); res.ID == nil || *res.ID != id || res.Result == nil {
			t.Fatalf("listen %d: second message is not its result: %+v", id, res)
		}
	}
}

// TestStdioStopHandsABlockingRunOver: a server whose service hands its runs
// over (serve --resume-interrupted), stopped by its signal while a blocking
// run_team waits, hands that run over too, as an HTTP server does: its
// session reads interrupted at once, with no cancel in its ledger. The
// request, ended with the server, used to cancel the run before the stop
// could hand it over.
func TestStdioStopHandsABlockingRunOver(t *testing.T) {
	st := memstore.New()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop(),
		HandOver: true, RunLeaseTTL: time.Minute})
	s := New(svc, Options{ValidateOutput: true})
	ctx, stop := context.WithCancel(context.Background())
	r := serveRawUntil(t, s, ctx)
	r.callTool("run_team", map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=5s", "sim:latency=5s"}, "wait": true, "session_id": "blocking"}, nil)
	waitFor(t, func() bool { _, ok := svc.Running("blocking"); return ok })

	stop()
	select {
	case err := <-r.served:
		r.served <- err // for the cleanup's close
		if err != nil {
			t.Fatalf("ServeStdio after its signal: %v", err)
		}
	case <-time.After(DefaultShutdownTimeout + 2*time.Second):
		t.Fatal("ServeStdio did not return after its signal")
	}
	if _, ok := svc.Running("blocking"); ok {
		t.Fatal("the run still runs after the server stopped")
	}
	l, err := st.Ledger(context.Background(), "blocking")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionCancelled {
			t.Errorf("the run was cancelled (%q), not handed over", e.Reason)
		}
	}
	b := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	v, err := b.Status(context.Background(), "blocking")
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusInterrupted {
		t.Errorf("the session after the stop reads %s; want interrupted at once, for a replica to take up", v.Result.Status)
	}
}
