package mcp

import (
	"testing"
)

// TestAClientsPricesAreRefusedAsOperatorOnly: an agent's price_in and
// price_out are the operator's (a team file's): a client's own figure
// could let its agents past a cost budget. Sent over MCP they are refused
// as operator-only, saying why and how to get them in, not met with the
// schema's bare "unknown property".
func TestAClientsPricesAreRefusedAsOperatorOnly(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	for _, tool := range []string{"run_team", "start_team"} {
		wantError(t, callTool(t, c, tool, `{"task":"x","cost_budget_usd":1,"agents":[{"model":"openrouter/qwen/qwen3-coder","price_in":0,"price_out":0},{"model":"sim"}]}`),
			"operator_only", "agents[0].price_in", "agents[0].price_out", "cost budget", "put it in a team file under --teams-dir and name the team")
		wantError(t, callTool(t, c, tool, `{"task":"x","models":["sim","sim"],"price_out":0}`), "operator_only", "sets price_out", "cost budget")
	}
}
