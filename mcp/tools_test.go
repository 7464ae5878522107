package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

func TestRunTeamWithWaitRunsToTheEnd(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"}, "wait": true,
	}))
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished || tr.Winner == nil || tr.FinalAnswer == nil {
		t.Fatalf("want a finished result with a winner, got %s", text(res))
	}
	if tr.Votes == nil || tr.Answers == nil || tr.NextAgents == nil || tr.Agents == nil {
		t.Errorf("result slices must be arrays, never null: %+v", tr)
	}
	if !strings.Contains(text(res), "Winner: ") || !strings.Contains(text(res), "Final answer:") {
		t.Errorf("text rendering lacks the summary or the final answer:\n%s", text(res))
	}
}

func TestRunTeamWithoutWaitReturnsTheHandleAtOnce(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	start := time.Now()
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim:latency=200ms", "sim:latency=200ms", "sim:latency=200ms"}, "wait": false,
	}))
	var handle coordination.TeamResult
	decode(t, res, &handle)
	if handle.Status != coordination.StatusRunning || handle.SessionID == "" {
		t.Fatalf("want a running handle, got %s", text(res))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("wait:false took %s", d)
	}
	if !strings.Contains(text(res), "team_status") {
		t.Errorf("the handle's text should say how to follow the run:\n%s", text(res))
	}
	// A second run_team for the running session waits on the same run.
	res = callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": handle.SessionID, "wait": true}))
	var final coordination.TeamResult
	decode(t, res, &final)
	if final.Status != coordination.StatusFinished || final.SessionID != handle.SessionID {
		t.Fatalf("want the same session finished, got %s", text(res))
	}
}

func TestRunTeamHandsBackTheHandleAfterTheWaitLimit(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{WaitLimit: 150 * time.Millisecond}), false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim:latency=300ms", "sim:latency=300ms", "sim:latency=300ms"},
	}))
	var handle coordination.TeamResult
	decode(t, res, &handle)
	if handle.Status != coordination.StatusRunning {
		t.Fatalf("want running after the wait limit, got %s", text(res))
	}
	// The run goes on after the handle is handed back.
	res = callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": handle.SessionID, "wait": true}))
	var final coordination.TeamResult
	decode(t, res, &final)
	if final.Status != coordination.StatusFinished {
		t.Fatalf("want finished, got %s", text(res))
	}
}

func TestCancelledSessionResumesWithRunTeam(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var handle coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{
		"task": "What is 6 * 7?", "models": []string{"sim:latency=300ms", "sim:latency=300ms"}, "wait": false,
	})), &handle)
	var cancelled coordination.TeamResult
	decode(t, callTool(t, c, "cancel_team", mustJSON(map[string]any{"session_id": handle.SessionID})), &cancelled)
	if cancelled.Status != coordination.StatusCancelled {
		t.Fatalf("cancel_team: want cancelled, got %s", cancelled.Status)
	}
	var resumed coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": handle.SessionID, "wait": true})), &resumed)
	if resumed.Status != coordination.StatusFinished {
		t.Fatalf("resume: want finished, got %s", resumed.Status)
	}
}

func TestRunTeamCancelledWhileBlockingCancelsTheRun(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var req mcpgo.CallToolRequest
		req.Params.Name = "run_team"
		req.Params.Arguments = map[string]any{"task": "What is 6 * 7?", "models": []string{"sim:latency=2s", "sim:latency=2s"}, "session_id": "blocking_run", "wait": true}
		_, _ = c.CallTool(ctx, req)
	}()
	waitFor(t, func() bool { _, ok := s.Service().Running("blocking_run"); return ok })
	cancel()
	<-done
	waitFor(t, func() bool {
		res, err := s.Service().Result(context.Background(), "blocking_run")
		return err == nil && res.Status == coordination.StatusCancelled
	})
}

func TestStartTeamThenStepToTheEnd(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim/strong", "sim/strong", "sim"},
	})), &started)
	if len(started.Agents) != 3 || started.Agents[0].Backend != "sim" || len(started.NextAgents) != 3 || started.Rules.Consensus != "majority" {
		t.Fatalf("start_team result: %+v", started)
	}
	finished := driveToEnd(t, c, started.SessionID, nil)
	if finished.Result == nil || finished.Result.Winner == nil {
		t.Fatalf("the finishing step carries no result with a winner: %+v", finished)
	}
}

// driveToEnd steps agents from next_agents until a step finishes the
// session; host, if set, acts for host agents.
func driveToEnd(t *testing.T, c *client.Client, id string, host func(agent string) *coordination.StepResult) *coordination.StepResult {
	t.Helper()
	next := []string{}
	var st coordination.StatusView
	decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": id, "format": "json"})), &st)
	next = st.Result.NextAgents
	for i := 0; i < 200; i++ {
		if len(next) == 0 {
			t.Fatalf("no agent is due and the session has not finished")
		}
		var sr coordination.StepResult
		agent := next[0]
		if host != nil && isHostAgent(st, agent) {
			sr = *host(agent)
		} else {
			decode(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": id, "agent_id": agent})), &sr)
		}
		if sr.Finished {
			return &sr
		}
		next = sr.NextAgents
	}
	t.Fatal("the session did not finish within 200 steps")
	return nil
}

func isHostAgent(st coordination.StatusView, id string) bool {
	for _, a := range st.Agents {
		if a.ID == id {
			return a.Host
		}
	}
	return false
}

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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestTeamStatusFormats(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 2 + 2?", "models": []string{"sim", "sim"}})), &started)

	md := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID}))
	var v coordination.StatusView
	decode(t, md, &v)
	if !strings.HasPrefix(text(md), "## Team "+started.SessionID) || len(v.Agents) != 2 || v.Timeline == nil {
		t.Errorf("markdown status: %s / %+v", text(md), v)
	}
	// The same pictures as the CLI's status, from the one renderer.
	for _, want := range []string{"**Vote graph**", "no answers yet", "majority: 2 of 2 votes needed", "**Timeline by agent**", "no steps yet"} {
		if !strings.Contains(text(md), want) {
			t.Errorf("markdown status lacks %q:\n%s", want, text(md))
		}
	}
	js := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID, "format": "json"}))
	var fromText coordination.StatusView
	if err := json.Unmarshal([]byte(text(js)), &fromText); err != nil || fromText.Result.SessionID != started.SessionID {
		t.Errorf("format json: the text is not the status JSON (%v): %s", err, text(js))
	}
}

func TestFinalizeTeamForcesAWinner(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim", "sim", "sim"}})), &started)
	for _, a := range started.NextAgents {
		callTool(t, c, "step", mustJSON(map[string]any{"session_id": started.SessionID, "agent_id": a}))
	}
	var res coordination.TeamResult
	decode(t, callTool(t, c, "finalize_team", mustJSON(map[string]any{"session_id": started.SessionID, "final": "winner"})), &res)
	if res.Status != coordination.StatusFinished || res.Winner == nil || res.StopReason == nil || *res.StopReason != coordination.StopFinalized {
		t.Fatalf("want finished by finalize, got %+v", res)
	}
}

func TestListBackends(t *testing.T) {
	// No keys anywhere: the environment's are blanked and $HOME has no .env.
	t.Setenv("HOME", t.TempDir())
	for _, info := range providers.Backends() {
		for _, k := range info.KeyEnv {
			t.Setenv(k, "")
		}
	}
	c := inProcess(t, newMemServer(t, Options{}), false)
	var out listBackendsResult
	res := callTool(t, c, "list_backends", `{}`)
	decode(t, res, &out)
	byName := map[string]backendView{}
	for _, b := range out.Backends {
		byName[b.Name] = b
		if b.KeyEnv == nil || b.Note == "" || b.Example == "" {
			t.Errorf("%s: incomplete entry %+v", b.Name, b)
		}
	}
	for _, info := range providers.Backends() {
		if _, ok := byName[info.Name]; !ok {
			t.Errorf("backend %s is not listed", info.Name)
		}
	}
	for _, name := range []string{"sim", "host"} {
		if b := byName[name]; !b.Usable || !b.Implemented {
			t.Errorf("%s must be usable: %+v", name, b)
		}
	}
	for _, name := range []string{"openai", "claude", "gemini", "grok"} {
		if b := byName[name]; b.Usable {
			t.Errorf("%s cannot be usable without its key: %+v", name, b)
		}
	}
	if out.DefaultTeam.Models == nil || len(out.DefaultTeam.Models) != 0 || !strings.Contains(out.DefaultTeam.Note, "sim") {
		t.Errorf("default team without keys: %+v", out.DefaultTeam)
	}
	if !strings.Contains(text(res), "| sim | yes |") {
		t.Errorf("text rendering:\n%s", text(res))
	}
}

func TestContextFilesOnlyUnderAllowedRoots(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "brief.md"), []byte("The answer must be in metres."), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	s := newMemServer(t, Options{Roots: []string{root}})
	c := inProcess(t, s, false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{
		"task": "How tall is it?", "models": []string{"sim", "sim"},
		"context": []map[string]string{{"text": "A plain note."}, {"path": "brief.md"}},
	})), &started)
	v, err := s.Service().Inspect(context.Background(), started.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := s.Service().Store().Session(context.Background(), started.SessionID)
	if len(sess.Context) != 2 || !strings.Contains(sess.Context[1], "metres") || v.Task == "" {
		t.Errorf("context stored: %q", sess.Context)
	}
	for _, p := range []string{outside, "link.txt", "../x", "missing.md"} {
		res := callTool(t, c, "start_team", mustJSON(map[string]any{
			"task": "x", "models": []string{"sim", "sim"}, "context": []map[string]string{{"path": p}},
		}))
		wantError(t, res, "bad_input", p)
	}
	// HTTP's default: no roots at all.
	c2 := inProcess(t, newMemServer(t, Options{}), false)
	wantError(t, callTool(t, c2, "start_team", mustJSON(map[string]any{
		"task": "x", "models": []string{"sim", "sim"}, "context": []map[string]string{{"path": "brief.md"}},
	})), "bad_input", "--allow-root")
}

// TestErrorsSayWhatToDo covers every error a caller can act on: each is an
// isError result with its code and a fix line, and the server keeps serving.
func TestErrorsSayWhatToDo(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	ctx := context.Background()

	// A finished session.
	var done coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 2 + 2?", "models": []string{"sim/strong", "sim/strong"}, "wait": true})), &done)
	// A step-driven team with a host agent, past round 0 so the host may vote.
	var hosted startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"host", "sim/strong"}, "session_id": "hosted"})), &hosted)
	callTool(t, c, "step", `{"session_id":"hosted","agent_id":"agent_b"}`)
	var view coordination.StepResult
	decode(t, callTool(t, c, "step", `{"session_id":"hosted","agent_id":"agent_a"}`), &view)
	var answered coordination.StepResult
	decode(t, callTool(t, c, "step", mustJSON(map[string]any{"session_id": "hosted", "agent_id": "agent_a", "action": "new_answer", "content": "391", "seen_steps": view.SeenSteps})), &answered)
	decode(t, callTool(t, c, "step", `{"session_id":"hosted","agent_id":"agent_a"}`), &view)
	if !contains(view.View.Actions, "vote") {
		t.Fatalf("the host should be offered a vote by now: %+v", view.View)
	}
	// A plain step-driven team.
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{"task": "What is 6 * 7?", "models": []string{"sim", "sim"}, "session_id": "plain"})), &hosted)

	cases := []struct {
		name, tool, args, code string
		words                  []string
	}{
		{"unknown session in team_status", "team_status", `{"session_id":"nope"}`, "session_not_found", []string{"nope"}},
		{"unknown session in step", "step", `{"session_id":"nope","agent_id":"agent_a"}`, "session_not_found", nil},
		{"unknown session in finalize_team", "finalize_team", `{"session_id":"nope"}`, "session_not_found", nil},
		{"unknown session in cancel_team", "cancel_team", `{"session_id":"nope"}`, "session_not_found", nil},
		{"unknown session in run_team", "run_team", `{"session_id":"nope"}`, "session_not_found", nil},
		{"finished session stepped", "step", mustJSON(map[string]any{"session_id": done.SessionID, "agent_id": "agent_a"}), "session_finished", []string{"team_status"}},
		{"finished session finalized", "finalize_team", mustJSON(map[string]any{"session_id": done.SessionID}), "session_finished", nil},
		{"finished session cancelled", "cancel_team", mustJSON(map[string]any{"session_id": done.SessionID}), "session_finished", nil},
		{"agent not in team", "step", `{"session_id":"plain","agent_id":"zed"}`, "agent_not_found", []string{"agent_a, agent_b"}},
		{"host action for a non-host agent", "step", `{"session_id":"hosted","agent_id":"agent_b","action":"new_answer","content":"x","seen_steps":{"agent_a":0}}`, "not_host_agent", nil},
		{"content without an action", "step", `{"session_id":"plain","agent_id":"agent_a","content":"x"}`, "bad_action", nil},
		{"invalid vote target", "step", mustJSON(map[string]any{"session_id": "hosted", "agent_id": "agent_a", "action": "vote", "target": "agent9", "reason": "r", "seen_steps": view.SeenSteps}), "bad_action", []string{"agent9"}},
		{"submission without seen_steps", "step", `{"session_id":"hosted","agent_id":"agent_a","action":"vote","target":"agent1","reason":"r"}`, "stale_view", nil},
		{"submission with old seen_steps", "step", `{"session_id":"hosted","agent_id":"agent_a","action":"vote","target":"agent1","reason":"r","seen_steps":{"agent_a":0,"agent_b":0}}`, "stale_view", nil},
		{"server step for a host agent (run_team on a host team)", "run_team", `{"session_id":"hosted"}`, "host_in_run_team", []string{"start_team"}},
		{"run_team with a host agent", "run_team", `{"task":"x","models":["sim","host"]}`, "host_in_run_team", []string{"agent_b"}},
		{"run_team with a host agent among agents", "run_team", `{"task":"x","agents":[{"model":"sim"},{"id":"me","model":"host"}]}`, "host_in_run_team", []string{"me"}},
		{"bad settings: early_stop without short", "run_team", `{"task":"x","models":["sim","sim"],"early_stop":true}`, "bad_settings", []string{"early_stop"}},
		{"bad settings: max_rounds too large", "start_team", `{"task":"x","models":["sim","sim"],"max_rounds":1000}`, "bad_settings", []string{"max_rounds"}},
		{"bad settings: negative max_rounds", "start_team", `{"task":"x","models":["sim","sim"],"max_rounds":-1}`, "bad_settings", []string{"max_rounds"}},
		{"bad settings: final", "finalize_team", `{"session_id":"plain","final":"best"}`, "bad_arguments", []string{"final"}},
		{"bad settings: too many criteria", "start_team", mustJSON(map[string]any{"task": "x", "models": []string{"sim", "sim"}, "eval_criteria": make([]map[string]string, 13)}), "bad_arguments", nil},
		{"bad model spec", "start_team", `{"task":"x","models":["nosuch/model"]}`, "bad_model_spec", []string{"nosuch"}},
		{"missing key, one agent would be left", "run_team", `{"task":"x","models":["openai/gpt-5.4","sim"]}`, "missing_key", []string{"OPENAI_API_KEY", "~/.env", `"env": {`, "client's config"}},
		{"no team and no default", "run_team", `{"task":"x"}`, "bad_input", []string{"sim"}},
		{"empty task", "start_team", `{"task":"  ","models":["sim"]}`, "bad_input", []string{"task"}},
		{"models and agents both", "start_team", `{"task":"x","models":["sim"],"agents":[{"model":"sim"}]}`, "bad_input", nil},
		{"session id taken by another task", "run_team", mustJSON(map[string]any{"session_id": done.SessionID, "task": "something else"}), "session_exists", nil},
		{"bad session id", "start_team", `{"task":"x","models":["sim"],"session_id":"../etc"}`, "bad_input", nil},
		// Malformed arguments.
		{"wrong type", "run_team", `{"task":5}`, "bad_arguments", []string{"task"}},
		{"wrong item type", "run_team", `{"task":"x","models":[1,2]}`, "bad_arguments", []string{"models[0]"}},
		{"missing required", "step", `{"session_id":"plain"}`, "bad_arguments", []string{"agent_id"}},
		{"unknown property", "team_status", `{"session_id":"plain","verbose":true}`, "bad_arguments", []string{"verbose"}},
		{"not an object", "team_status", `["plain"]`, "bad_arguments", nil},
		{"enum violated", "step", `{"session_id":"plain","agent_id":"agent_a","action":"shout"}`, "bad_arguments", []string{"action"}},
		{"seen_steps not integers", "step", `{"session_id":"plain","agent_id":"agent_a","action":"vote","seen_steps":{"agent_a":"x"}}`, "bad_arguments", []string{"seen_steps"}},
		{"number too large for an int", "start_team", `{"task":"x","models":["sim"],"max_rounds":1e300}`, "bad_arguments", nil},
		{"missing arguments", "cancel_team", `null`, "bad_arguments", []string{"session_id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, callTool(t, c, tc.tool, tc.args), tc.code, tc.words...)
		})
	}
	// The failed run_team calls created nothing.
	sessions, err := s.Service().Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 3 {
		t.Errorf("refused calls must not create sessions; have %d: %+v", len(sessions), sessions)
	}
	// And the server still answers.
	decode(t, callTool(t, c, "list_backends", `{}`), &listBackendsResult{})
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

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFinalizeWhileRunTeamBlocks: finalize_team from another request ends a
// run that a run_team call is waiting on; both return results, not errors.
func TestFinalizeWhileRunTeamBlocks(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	blocked := make(chan *mcpgo.CallToolResult, 1)
	go func() {
		blocked <- callTool(t, c, "run_team", `{"task":"What is 6 * 7?","models":["sim:latency=300ms","sim:latency=300ms","sim:latency=300ms"],"session_id":"fin","wait":true}`)
	}()
	waitFor(t, func() bool {
		res, err := s.Service().Result(context.Background(), "fin")
		return err == nil && res.Steps >= 3
	})
	var fin coordination.TeamResult
	decode(t, callTool(t, c, "finalize_team", `{"session_id":"fin"}`), &fin)
	if fin.Status != coordination.StatusFinished {
		t.Fatalf("finalize_team: %+v", fin)
	}
	var waited coordination.TeamResult
	decode(t, <-blocked, &waited)
	if waited.SessionID != "fin" {
		t.Fatalf("run_team: %+v", waited)
	}
}

// Concurrent identical run_team calls with one client-chosen session_id all
// join the one run; a different team under that id is refused.
func TestIdenticalRunTeamCallsJoinOneRun(t *testing.T) {
	c := inProcess(t, newFileServer(t, Options{}), false)
	args := mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim:latency=50ms", "sim:latency=50ms", "sim:latency=50ms"}, "session_id": "team_joined", "wait": true})
	results := make(chan *mcpgo.CallToolResult, 6)
	for range 6 {
		go func() { results <- callTool(t, c, "run_team", args) }()
	}
	for range 6 {
		res := <-results
		if res.IsError {
			t.Fatalf("an identical run_team failed: %s", text(res))
		}
		var tr struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		}
		decode(t, res, &tr)
		if tr.SessionID != "team_joined" || tr.Status != "finished" {
			t.Errorf("joined call = %+v; want the one finished session", tr)
		}
	}
	other := mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"sim", "sim"}, "session_id": "team_joined"})
	wantError(t, callTool(t, c, "run_team", other), "session_exists", "team_joined", "team")
}
