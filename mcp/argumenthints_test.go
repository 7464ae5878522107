package mcp

import (
	"strings"
	"testing"
)

// TestAnUnknownArgumentNamesTheArgumentMeant: MassGen's model is models on
// run_team and start_team, a near miss is named (at the top level and inside
// an agent), and generate_eval_criteria, which has model, points the other
// way.
func TestAnUnknownArgumentNamesTheArgumentMeant(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	for _, call := range []struct{ tool, args, want string }{
		{"run_team", `{"task":"What is 2+2?","model":"sim"}`, `for model, did you mean models (a list of model specs, one per agent`},
		{"start_team", `{"task":"What is 2+2?","model":"sim"}`, `for model, did you mean models`},
		{"run_team", `{"task":"What is 2+2?","max_round":3}`, `for max_round, did you mean max_rounds?`},
		{"run_team", `{"task":"What is 2+2?","agents":[{"model":"sim","modle":"x"},{"model":"sim"}]}`, `agents[0]: additional properties 'modle' not allowed; for modle, did you mean model?`},
		{"generate_eval_criteria", `{"task":"Write fizzbuzz.py","models":"sim"}`, `for models, did you mean model?`},
	} {
		res := callTool(t, c, call.tool, call.args)
		wantError(t, res, "bad_arguments", call.want)
	}
	res := callTool(t, c, "run_team", `{"task":"What is 2+2?","frobnicate":1}`)
	wantError(t, res, "bad_arguments", "'frobnicate' not allowed")
	if strings.Contains(text(res), "did you mean") {
		t.Errorf("a name near nothing got a suggestion: %s", text(res))
	}
}
