package mcp

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAnUnpricedAgentUnderACostBudgetHasItsOwnCode: a cost budget refuses
// an agent it cannot price (coordination.ErrUnpriced); the client is told
// so under its own code with the ways out it has — a token budget — and
// the one the operator has, not a generic bad_input.
func TestAnUnpricedAgentUnderACostBudgetHasItsOwnCode(t *testing.T) {
	// Every model opens (no keys here); the refusal comes before any call.
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		t.Error("a refused team's agent was called")
		return providers.Action{}, providers.Usage{}, nil
	})
	open := func(providers.Spec) (providers.Provider, error) { return p, nil }
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Logger: zerolog.Nop()})
	c := inProcess(t, New(svc, Options{ValidateOutput: true}), false)
	for _, tool := range []string{"run_team", "start_team"} {
		wantError(t, callTool(t, c, tool, `{"task":"x","cost_budget_usd":1,"models":["openrouter/qwen/qwen3-coder","sim"]}`),
			"unpriced_agent", "openrouter/qwen/qwen3-coder", "To fix: use token_budget instead of cost_budget_usd", "team file")
	}
}
