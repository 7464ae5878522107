package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestToolNamesAreTheFixLinesNotTheCores: the core's errors carry facts, and
// the MCP words — which tool to call, which field to send — come from this
// surface's fix line. Each refusal's sentence names no tool; its fix names
// the one to call, worded from the facts (a decided session is finalized, not
// read; a submission without seen_steps is told to send them).
func TestToolNamesAreTheFixLinesNotTheCores(t *testing.T) {
	s := newMemServer(t, Options{})
	c := inProcess(t, s, false)
	ctx := context.Background()

	var done coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"What is 2 + 2?","models":["sim/strong","sim/strong"],"wait":true}`), &done)
	// A step-driven team with final present sits decided until finalized.
	var decided startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"What is 17 * 23?","models":["sim/strong","sim/strong"],"final":"present","session_id":"decided"}`), &decided)
	for range 20 {
		res, err := s.Service().Result(ctx, "decided")
		if err != nil {
			t.Fatal(err)
		}
		if res.Status == coordination.StatusDecided {
			break
		}
		for _, a := range []string{"agent_a", "agent_b"} {
			callTool(t, c, "step", `{"session_id":"decided","agent_id":"`+a+`"}`)
		}
	}
	var hosted startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"What is 6 * 7?","models":["host","sim"],"session_id":"hosted"}`), &hosted)

	tools := []string{"run_team", "start_team", "team_status", "finalize_team", "cancel_team", "seen_steps", "step without"}
	for _, tc := range []struct {
		name, tool, args, code, fix string
	}{
		{"a decided session stepped", "step", `{"session_id":"decided","agent_id":"agent_a"}`, "session_finished", "call finalize_team to write the final answer"},
		{"a finished session stepped", "step", `{"session_id":"` + done.SessionID + `","agent_id":"agent_a"}`, "session_finished", "read the result with team_status"},
		{"a submission without seen_steps", "step", `{"session_id":"hosted","agent_id":"agent_a","action":"new_answer","content":"42"}`, "stale_view", "send seen_steps with the submission"},
		{"a submission before any view", "step", `{"session_id":"hosted","agent_id":"agent_a","action":"new_answer","content":"42","seen_steps":{"agent_a":0,"agent_b":0}}`, "stale_view", "call step for this agent without an action first"},
		{"a host team run by the server", "run_team", `{"session_id":"hosted"}`, "host_in_run_team", "create the team with start_team and drive it with step"},
		{"a server agent given an action", "step", `{"session_id":"hosted","agent_id":"agent_b","action":"new_answer","content":"x","seen_steps":{"agent_a":0}}`, "not_host_agent", "call step without action"},
	} {
		res := callTool(t, c, tc.tool, tc.args)
		wantError(t, res, tc.code)
		sentence, fix, _ := strings.Cut(text(res), "\nTo fix: ")
		for _, w := range tools {
			if strings.Contains(sentence, w) {
				t.Errorf("%s: the core's sentence names %q, a word of this surface: %s", tc.name, w, sentence)
			}
		}
		if !strings.HasPrefix(fix, tc.fix) {
			t.Errorf("%s: fix line %q, want it to start %q", tc.name, fix, tc.fix)
		}
	}
}
