package mcp

import (
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
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

func TestSecondStepOfABusyAgentIsRefused(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=1s", "sim"}})), &started)
	args := mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": "agent_a"})
	var wg sync.WaitGroup
	results := make([]*mcpgo.CallToolResult, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(200 * time.Millisecond) // let the first step take the lock
			}
			results[i] = callTool(t, c, "step", args)
		}()
	}
	wg.Wait()
	if results[0].IsError {
		t.Fatalf("first step failed: %s", text(results[0]))
	}
	wantError(t, results[1], "agent_busy", "agent_a")
}

// TestStepSchemaSnapshot pins step's definition (testdata/toolsnaps/step.json).
func TestStepSchemaSnapshot(t *testing.T) { checkToolSnap(t, "step") }
