package mcp

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestGenerateEvalCriteriaSpendIsTheSessions: criteria a model writes for a
// session count in its tokens, once a call, while the tool's own result
// still reports the call's usage; once the session's token_budget cannot
// take another call's worst case, the call is refused (budget_too_small)
// before the model is asked, saying how to get criteria for nothing.
func TestGenerateEvalCriteriaSpendIsTheSessions(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", mustJSON(map[string]any{
		"task": "What is 17 * 23?", "models": []string{"sim", "sim"}, "token_budget": 22_000})), &started)

	var reported int64
	for call := 1; call <= 60; call++ {
		res := callTool(t, c, "generate_eval_criteria", mustJSON(map[string]any{"session_id": started.SessionID, "model": "sim", "count": 3}))
		if res.IsError {
			if reported < 22_000-12_000 {
				t.Fatalf("call %d refused with %d tokens reported spent: %s", call, reported, text(res))
			}
			wantError(t, res, "budget_too_small", "token_budget", "criteria you wrote")
			return
		}
		var out generateCriteriaResult
		decode(t, res, &out)
		if out.Usage == nil || out.Usage.Tokens() == 0 {
			t.Fatalf("call %d: the result reports no usage: %+v", call, out)
		}
		reported += out.Usage.Tokens()
		var st coordination.StatusView
		decode(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": started.SessionID})), &st)
		if got := st.Result.Usage.Input + st.Result.Usage.Output; got != reported {
			t.Fatalf("after %d criteria calls reporting %d tokens the session counts %d", call, reported, got)
		}
	}
	t.Fatalf("60 criteria calls (%d tokens) ran in a token_budget of 22,000", reported)
}
