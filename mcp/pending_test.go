package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

// The wait limit of these tests stands for the 50 s of production: every
// blocking call returns within it (plus scheduling slack) while the sims,
// slower than it, keep working.
const (
	testWaitLimit = 200 * time.Millisecond
	slack         = time.Second
)

// timedCall calls a tool and fails if it blocked past the wait limit.
func timedCall(t *testing.T, c *client.Client, tool, args string) *mcpgo.CallToolResult {
	t.Helper()
	start := time.Now()
	res := callTool(t, c, tool, args)
	if d := time.Since(start); d > testWaitLimit+slack {
		t.Fatalf("%s blocked %s, past the wait limit of %s", tool, d, testWaitLimit)
	}
	return res
}

// untilDone repeats a call while it returns status running, as its text
// says to, and returns the first other result and how many calls ran out.
func untilDone(t *testing.T, c *client.Client, tool, args string) (*mcpgo.CallToolResult, int) {
	t.Helper()
	for pending := 0; pending < 100; pending++ {
		res := timedCall(t, c, tool, args)
		var p struct{ Status string }
		if res.IsError || res.StructuredContent == nil {
			return res, pending
		}
		decode(t, res, &p)
		if p.Status != coordination.StatusRunning {
			return res, pending
		}
		if !strings.Contains(text(res), "again") {
			t.Fatalf("a running %s does not say how to continue: %s", tool, text(res))
		}
	}
	t.Fatalf("%s still running after 100 calls", tool)
	return nil, 0
}

func TestAStepPastTheWaitLimitReturnsItsContinuation(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: testWaitLimit}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=900ms", "sim"}})), &started)
	args := mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})
	var p Pending
	res := timedCall(t, c, "step", args)
	decode(t, res, &p)
	wantNext := `step{"session_id":"` + started.SessionID + `","agent_id":"agent_a","after_step":0}`
	if p.Status != "running" || p.Tool != "step" || p.SessionID != started.SessionID || p.AgentID != "agent_a" || p.Next != wantNext {
		t.Fatalf("pending step: %+v, want next %s", p, wantNext)
	}
	if !strings.Contains(text(res), "agent_a's step is still going on") || !strings.Contains(text(res), "Call "+wantNext+" again") {
		t.Errorf("the text does not say what goes on and what to call: %s", text(res))
	}
	next := strings.TrimPrefix(p.Next, "step")
	done, pending := untilDone(t, c, "step", next)
	var sr coordination.StepResult
	decode(t, done, &sr)
	if sr.Action != "new_answer" || !strings.HasSuffix(sr.Label, ".1") || pending == 0 {
		t.Fatalf("the continuation got %+v after %d running results, want agent_a's one answer", sr, pending)
	}
	// The continuation again, the step long landed: the same step, not
	// another.
	var again coordination.StepResult
	decode(t, callTool(t, c, "step", next), &again)
	if again.Label != sr.Label {
		t.Errorf("the continuation called again got %q, want the step's %q", again.Label, sr.Label)
	}
	// The first call's arguments again, the continuation collected: new
	// work (agent_a is not due until agent_b answers), not the old result
	// kept under them.
	wantError(t, callTool(t, c, "step", args), "agent_not_next")
	var st coordination.StatusView
	decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID, "format": "json"})), &st)
	if st.Agents[0].Steps != 1 {
		t.Errorf("agent_a took %d steps, want 1: the continuation joined the step, it did not start another", st.Agents[0].Steps)
	}
}

// TestACallThatJoinedAStepNamesItsContinuation: a second step call that
// joins the first's flight and outlives its wait names the same
// continuation, after_step included, so it too can be collected on any
// server.
func TestACallThatJoinedAStepNamesItsContinuation(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: testWaitLimit}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=2s", "sim"}})), &started)
	args := mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})
	first := make(chan Pending, 1)
	go func() {
		var p Pending
		decode(t, callTool(t, c, "step", args), &p)
		first <- p
	}()
	time.Sleep(50 * time.Millisecond) // the first starts the flight
	var joined Pending
	decode(t, callTool(t, c, "step", args), &joined)
	p := <-first
	if p.Next == "" || joined.Next != p.Next || !strings.Contains(joined.Next, `"after_step":0`) {
		t.Fatalf("the first call names %q, the one that joined %q; want the same continuation with after_step", p.Next, joined.Next)
	}
}

func TestFinalizePastTheWaitLimitReturnsItsContinuation(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: testWaitLimit}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim/strong:latency=900ms", "sim/strong:latency=900ms"}})), &started)
	for _, agent := range []string{"agent_a", "agent_b"} {
		untilDone(t, c, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": agent}))
	}
	// present asks the winner's model for the final answer: slower than
	// the limit.
	done, pending := untilDone(t, c, "finalize_team", mustJSON(map[string]any{"session_id": started.SessionID, "final": "present"}))
	var res TeamResult
	decode(t, done, &res)
	if res.Status != coordination.StatusFinished || res.FinalAnswer == nil || pending == 0 {
		t.Fatalf("finalize_team ended %s after %d running results: %s", res.Status, pending, text(done))
	}
}

func TestCriteriaPastTheWaitLimitReturnTheirContinuation(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: testWaitLimit}), false)
	args := mustJSON(map[string]any{"task": "Plan the migration of the billing database", "model": "sim:latency=900ms", "count": 4})
	var p Pending
	decode(t, timedCall(t, c, "generate_eval_criteria", args), &p)
	if p.Status != "running" || !strings.HasPrefix(p.Next, "generate_eval_criteria{") {
		t.Fatalf("pending criteria: %+v", p)
	}
	done, _ := untilDone(t, c, "generate_eval_criteria", args)
	var out generateCriteriaResult
	decode(t, done, &out)
	if out.Source != "generated" || len(out.Criteria) != 4 {
		t.Fatalf("the continuation got %+v", out)
	}
}

func TestACheckpointPastTheWaitLimitReturnsItsContinuation(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: testWaitLimit}), false)
	res := timedCall(t, c, "checkpoint", mustJSON(map[string]any{
		"objective": "Drop the legacy_orders table from the production database.",
		"models":    []string{"sim/strong:latency=300ms", "sim:latency=300ms", "sim:latency=300ms"},
	}))
	var first checkpoint.Result
	decode(t, res, &first)
	if first.Status != coordination.StatusRunning || first.Verdict != nil || first.SessionID == "" {
		t.Fatalf("a review slower than the limit: %+v", first)
	}
	if want := `checkpoint{session_id: "` + first.SessionID + `"}`; !strings.Contains(text(res), want) {
		t.Errorf("the text does not name %s: %s", want, text(res))
	}
	done, _ := untilDone(t, c, "checkpoint", mustJSON(map[string]any{"session_id": first.SessionID}))
	var cr checkpoint.Result
	decode(t, done, &cr)
	if cr.Status != coordination.StatusFinished || cr.Verdict == nil || len(cr.Plan) == 0 {
		t.Fatalf("the continuation got %+v", cr)
	}
}

// TestCancelTeamStopsAStepItsCallerLeft: a step detached from its caller is
// still the session's, and cancel_team stops it.
func TestCancelTeamStopsAStepItsCallerLeft(t *testing.T) {
	s := newMemServer(t, Options{WaitLimit: testWaitLimit})
	c := inProcess(t, s, false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=1m", "sim"}})), &started)
	args := mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})
	var p Pending
	decode(t, timedCall(t, c, "step", args), &p)
	callTool(t, c, "cancel_team", mustJSON(map[string]any{"session_id": started.SessionID}))
	if res, _ := untilDone(t, c, "step", args); !res.IsError && !strings.Contains(text(res), "cancel") {
		t.Errorf("the cancelled step's continuation: %s", text(res))
	}
}

func TestFlightsStopWithTheServer(t *testing.T) {
	fs := newFlights()
	stopped := make(chan error, 1)
	fs.join("k", context.Background(), "", nil, func(ctx context.Context) (any, error) {
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	fs.cancelAll()
	if err := <-stopped; !errors.Is(err, errStopping) {
		t.Errorf("the flight stopped with %v, want %v", err, errStopping)
	}
	f, _ := fs.join("k2", context.Background(), "", nil, func(context.Context) (any, error) { t.Error("work started after the stop"); return nil, nil })
	if <-f.done; !errors.Is(f.err, errStopping) {
		t.Errorf("a flight after the stop: %v", f.err)
	}
}

// TestEveryBlockingToolSaysHowToContinue: a model reads the continuation in
// the description before it ever meets a running result.
func TestEveryBlockingToolSaysHowToContinue(t *testing.T) {
	tools := listTools(t)
	for name, want := range map[string]string{
		"run_team":               "on status running call run_team{session_id} again",
		"checkpoint":             "on status running call checkpoint{session_id} again",
		"step":                   "On status running (after 50 s) make the call in its next",
		"finalize_team":          "On status running (after 50 s) call again with the same arguments",
		"generate_eval_criteria": "On status running (after 50 s) call again with the same arguments",
	} {
		if !strings.Contains(tools[name].Description, want) {
			t.Errorf("%s's description does not say %q: %s", name, want, tools[name].Description)
		}
	}
}

// TestFlightsForgetTheirResults: a collected flight leaves nothing behind,
// and an uncollected one only until it expires.
func TestFlightsForgetTheirResults(t *testing.T) {
	h := &handler{flights: newFlights(), opts: Options{WaitLimit: time.Second}}
	work := func(context.Context) (int, error) { return 42, nil }
	if v, p, err := awaitFlight(h, context.Background(), flightCall{tool: "t", args: 1}, work); v != 42 || p != nil || err != nil {
		t.Fatalf("got %v %v %v", v, p, err)
	}
	// The flight's goroutine finishes after done: waited for (bounded, for
	// a loaded machine) rather than slept. A flight never forgotten, or an
	// expiry never armed, still fails (waitFor's bound).
	left := func() int { h.flights.mu.Lock(); defer h.flights.mu.Unlock(); return len(h.flights.calls) }
	waitFor(t, func() bool { return left() == 0 })
	f, _ := h.flights.join("uncollected", context.Background(), "", nil, func(context.Context) (any, error) { return 1, nil })
	<-f.done
	waitFor(t, func() bool { h.flights.mu.Lock(); defer h.flights.mu.Unlock(); return f.expire != nil })
	h.flights.collected("uncollected", f)
}

// TestAStepsContinuationSaysWhoIsNextNow: a model agent's step outlives its
// wait (Pending), the driver steps another agent meanwhile (start_team's
// next_agents may be stepped in parallel), then makes the call the Pending
// named. The reply is the step that landed, and the session as it stands
// now, as the service answers such a retry (landedResult): not the
// next_agents of the moment it landed, which named agent_b alone though
// agent_b had since answered and agent_a was due again — a driver following
// it stepped the wrong agent and left the due one unstepped.
func TestAStepsContinuationSaysWhoIsNextNow(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: testWaitLimit}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=600ms", "sim"}})), &started)
	id := started.SessionID
	var p Pending
	decode(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": id, "agent_id": "agent_a"})), &p)
	if p.Status != "running" {
		t.Fatalf("agent_a's step did not outlive the wait: %+v", p)
	}
	status := func() coordination.StatusView {
		var st coordination.StatusView
		decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": id, "format": "json"})), &st)
		return st
	}
	waitFor(t, func() bool { return status().Agents[0].Steps == 1 })
	var b coordination.StepResult
	decode(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": id, "agent_id": "agent_b"})), &b)
	now := status().Result.NextAgents
	var a coordination.StepResult
	decode(t, callTool(t, c, "step", strings.TrimPrefix(p.Next, "step")), &a)
	if a.AgentID != "agent_a" || a.Action != "new_answer" || !strings.HasSuffix(a.Label, ".1") {
		t.Fatalf("the continuation answered %+v, want agent_a's first answer", a)
	}
	if strings.Join(a.NextAgents, ",") != strings.Join(now, ",") {
		t.Errorf("the continuation says next_agents %v; the session's are %v (agent_b answered since agent_a's step landed)", a.NextAgents, now)
	}
}
