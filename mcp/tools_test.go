package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// driveToEnd steps agents from next_agents until a step finishes the
// session; host, if set, acts for host agents.
func driveToEnd(t *testing.T, c *client.Client, id string, host func(agent string) *coordination.StepResult) *coordination.StepResult {
	t.Helper()
	var st coordination.StatusView
	decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": id, "format": "json"})), &st)
	next := st.Result.NextAgents
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
		{"two keys missing, both named", "run_team", `{"task":"x","models":["openai/gpt-5.4","claude/claude-haiku-4-5","sim"]}`, "missing_key", []string{"2 agents have no key here", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}},
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
