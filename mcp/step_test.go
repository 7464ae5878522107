package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func TestHostAgentTakesPartThroughViewsAndSubmissions(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"host", "sim/strong", "sim/strong"}, "answer_format": "short",
	})), &started)
	id := started.SessionID
	host := func(agent string) *coordination.StepResult {
		var view coordination.StepResult
		decode(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": id, "agent_id": agent})), &view)
		if view.Action != "view" || view.View == nil || view.View.Prompt == "" || len(view.View.Actions) == 0 || view.View.VoteEnum == nil || len(view.SeenSteps) == 0 {
			t.Fatalf("host view incomplete: %+v", view)
		}
		args := map[string]any{"session_id": id, "agent_id": agent, "seen_steps": view.SeenSteps}
		if contains(view.View.Actions, "vote") && len(view.View.VoteEnum) > 0 {
			args["action"], args["target"], args["reason"] = "vote", view.View.VoteEnum[0], "it shows its working"
		} else {
			args["action"], args["content"] = "new_answer", "17 * 23 = 391.\nAnswer: 391"
		}
		var sr coordination.StepResult
		decode(t, callTool(t, c, "step", mustJSON(args)), &sr)
		if sr.Action != args["action"] {
			t.Fatalf("submitted %v, recorded %+v", args["action"], sr)
		}
		return &sr
	}
	end := driveToEnd(t, c, id, host)
	if end.Result == nil || end.Result.Status != coordination.StatusFinished {
		t.Fatalf("want finished, got %+v", end)
	}
}

func TestStepOfAnAgentNotDueIsRefusedWithTheReason(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim", "sim"}})), &started)
	callTool(t, c, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"}))
	// agent_a has its first answer; it waits for agent_b's (the round-0 barrier).
	wantError(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})), "agent_not_next", "agent_b")
}

// TestTheSameStepCalledTwiceJoinsTheStepInFlight: a second identical call
// (the continuation of a step past the wait limit, pending.go) waits for the
// step in flight instead of starting another; both get its result.
func TestTheSameStepCalledTwiceJoinsTheStepInFlight(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=1s", "sim"}})), &started)
	args := mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})
	results := stepTwice(t, c, args)
	var first, second coordination.StepResult
	decode(t, results[0], &first)
	decode(t, results[1], &second)
	if first.Label == "" || first.Label != second.Label {
		t.Errorf("the calls got answers %q and %q, want the one step's", first.Label, second.Label)
	}
	var st coordination.StatusView
	decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID, "format": "json"})), &st)
	if st.Agents[0].Steps != 1 {
		t.Errorf("agent_a took %d steps, want 1", st.Agents[0].Steps)
	}
}

// TestAStepOfAnAgentBusyElsewhereJoinsIt: a step of an agent whose step
// another server (here over the same state directory; a replica, behind a
// load balancer) has in flight waits for that step and answers with it, as
// the same call on the same server joins its flight: one step, not two,
// and no refusal (stepjoin.go).
func TestAStepOfAnAgentBusyElsewhereJoinsIt(t *testing.T) {
	dir, c1, c2 := twoServers(t, Options{ValidateOutput: true})
	var started startTeamResult
	decode(t, callTool(t, c1, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=1s", "sim"}})), &started)
	args := mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})
	done := make(chan *mcpgo.CallToolResult)
	go func() { done <- callTool(t, c1, "step", args) }()
	// Let the first step take the lock, waited for (bounded) rather than
	// slept: on a loaded machine a fixed 200 ms could pass before it did,
	// and the second call would take it first.
	st := filestore.New(dir)
	waitFor(t, func() bool {
		held, _ := st.InFlight(context.Background(), started.SessionID)
		return held["agent_a"]
	})
	joined := callTool(t, c2, "step", args)
	if joined.IsError {
		t.Fatalf("the step on the second server failed: %s", text(joined))
	}
	res := <-done
	if res.IsError {
		t.Fatalf("first step failed: %s", text(res))
	}
	var first, second coordination.StepResult
	decode(t, res, &first)
	decode(t, joined, &second)
	if first.Label == "" || first.Label != second.Label {
		t.Errorf("the servers answered %q and %q, want the one step's", first.Label, second.Label)
	}
	var status coordination.StatusView
	decode(t, callTool(t, c2, "team_status", mustJSON(map[string]any{"session_id": started.SessionID, "format": "json"})), &status)
	if status.Agents[0].Steps != 1 {
		t.Errorf("agent_a took %d steps, want 1", status.Agents[0].Steps)
	}
}

// TestAStepsContinuationOnAnotherServerGetsTheStep: a step outlives its
// wait on one server (a replica) and returns its continuation; the
// continuation, sent to another server over the same store after the step
// landed, answers with that step rather than taking another: after_step
// names where the step began, so any server finds it.
func TestAStepsContinuationOnAnotherServerGetsTheStep(t *testing.T) {
	dir, c1, c2 := twoServers(t, Options{ValidateOutput: true, WaitLimit: testWaitLimit})
	var started startTeamResult
	decode(t, callTool(t, c1, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=600ms", "sim"}})), &started)
	var p Pending
	decode(t, callTool(t, c1, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})), &p)
	if p.Status != "running" || !strings.Contains(p.Next, `"after_step":0`) {
		t.Fatalf("the first call: %+v, want a continuation naming after_step", p)
	}
	next := strings.TrimPrefix(p.Next, "step")
	st := filestore.New(dir)
	waitFor(t, func() bool {
		l, err := st.Ledger(context.Background(), started.SessionID)
		return err == nil && len(l.Agents["agent_a"]) == 1
	})
	var got coordination.StepResult
	decode(t, callTool(t, c2, "step", next), &got)
	if got.AgentID != "agent_a" || got.Action != "new_answer" || !strings.HasSuffix(got.Label, ".1") {
		t.Fatalf("the continuation on the other server got %+v, want agent_a's first answer", got)
	}
	l, err := st.Ledger(context.Background(), started.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Agents["agent_a"]); n != 1 {
		t.Errorf("agent_a took %d steps, want 1: the continuation found the step, it did not take another", n)
	}
	wantError(t, callTool(t, c2, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a", "after_step": -1})), "", "after_step")
}

// twoServers is two servers with opts over one state directory (dir), as
// two replicas sharing a store are, and a client of each.
func twoServers(t *testing.T, opts Options) (dir string, c1, c2 *client.Client) {
	t.Helper()
	dir = t.TempDir()
	server := func() *client.Client {
		svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
		return inProcess(t, New(svc, opts), false)
	}
	return dir, server(), server()
}

// stepTwice makes the same step call twice, the second while the first is
// in flight.
func stepTwice(t *testing.T, c *client.Client, args string) []*mcpgo.CallToolResult {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]*mcpgo.CallToolResult, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(200 * time.Millisecond) // let the first step start
			}
			results[i] = callTool(t, c, "step", args)
		}()
	}
	wg.Wait()
	return results
}

// TestStepSchemaSnapshot pins step's definition (testdata/toolsnaps/step.json).
func TestStepSchemaSnapshot(t *testing.T) { checkToolSnap(t, "step") }
