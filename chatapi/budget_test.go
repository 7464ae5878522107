package chatapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/massgen-go/massgen-mcp/mcp"
)

// TestABudgetTheTeamCannotMeetIsRefusedInTheChatClientsTerms: a team file
// whose budget cannot pay for one round, or whose cost budget cannot price
// an agent, is refused under the codes MCP gives them (budget_too_small,
// unpriced_agent), saying the fix is the operator's team file and what a
// chat client can do meanwhile (another team), where before both were a
// bad_request starting "invalid input:" that told the client to raise a
// budget or use token_budget, which it cannot set.
func TestABudgetTheTeamCannotMeetIsRefusedInTheChatClientsTerms(t *testing.T) {
	// A key that is never sent: the refusal comes before any call.
	t.Setenv("OPENROUTER_API_KEY", "dummy-key-not-a-key")
	s := serveTeams(t, mcp.Options{}, mcp.HTTPOptions{}, nil, map[string]string{
		"tight.yaml":    "agents: [{model: 'sim'}, {model: 'sim'}]\nrules: {token_budget: 10}\n",
		"unpriced.yaml": "agents: [{model: 'openrouter/qwen/qwen3-coder'}, {model: 'sim'}]\nrules: {cost_budget_usd: 1}\n",
	})
	c := s.client(tokenA)
	for _, tc := range []struct {
		model, code string
		want        []string
	}{
		{"massgen/tight", "budget_too_small", []string{"the budget cannot pay for one round", "team file tight.yaml", "operator", "max_output_tokens", "fewer agents", "another team"}},
		{"massgen/unpriced", "unpriced_agent", []string{"openrouter/qwen/qwen3-coder", "team file unpriced.yaml", "operator", "price_in", "token_budget", "another team"}},
	} {
		_, err := c.Chat.Completions.New(context.Background(), ask(tc.model, "What is 6 * 7?"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: error %v, want an API error", tc.model, err)
		}
		if apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != tc.code || apiErr.Param != "model" {
			t.Errorf("%s: status %d code %q param %q, want 400 %s model", tc.model, apiErr.StatusCode, apiErr.Code, apiErr.Param, tc.code)
		}
		for _, want := range tc.want {
			if !strings.Contains(apiErr.Message, want) {
				t.Errorf("%s: message %q lacks %q", tc.model, apiErr.Message, want)
			}
		}
		for _, not := range []string{"invalid input", "raise the budget", "an estimate spends nothing", "use token_budget instead"} {
			if strings.Contains(apiErr.Message, not) {
				t.Errorf("%s: message %q says %q, which a chat client cannot act on", tc.model, apiErr.Message, not)
			}
		}
	}
}

// TestEveryBudgetProblemReachesTheChatClient: a team whose cost budget
// cannot price an agent and whose token budget cannot pay for a round is
// refused naming both problems, each without the advice meant for a
// caller who sets budgets; before, the message was cut at the first
// problem's advice, losing the token budget's.
func TestEveryBudgetProblemReachesTheChatClient(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "dummy-key-not-a-key")
	s := serveTeams(t, mcp.Options{}, mcp.HTTPOptions{}, nil, map[string]string{
		"both.yaml": "agents: [{model: 'openrouter/qwen/qwen3-coder'}, {model: 'sim'}]\nrules: {cost_budget_usd: 1, token_budget: 10}\n",
	})
	c := s.client(tokenA)
	_, err := c.Chat.Completions.New(context.Background(), ask("massgen/both", "What is 6 * 7?"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v, want an API error", err)
	}
	if apiErr.Code != "unpriced_agent" {
		t.Errorf("code %q, want unpriced_agent", apiErr.Code)
	}
	for _, want := range []string{"openrouter/qwen/qwen3-coder", "a token budget of 10 cannot pay for one round", "team file both.yaml"} {
		if !strings.Contains(apiErr.Message, want) {
			t.Errorf("message %q lacks %q", apiErr.Message, want)
		}
	}
	for _, not := range []string{"use token_budget instead", "have the operator give", "raise the budget"} {
		if strings.Contains(apiErr.Message, not) {
			t.Errorf("message %q says %q, advice for a caller who sets budgets", apiErr.Message, not)
		}
	}
}
