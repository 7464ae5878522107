package coordination_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestSelfHostedAgentsAreEstimatedAtAKnownZero: an agent on the
// operator's own vllm, sglang, LM Studio or Ollama has no per-token bill:
// the estimate prices it at $0, so it is not among the unpriced agents a
// cost budget cannot bound.
func TestSelfHostedAgentsAreEstimatedAtAKnownZero(t *testing.T) {
	h := coordtest.New(t, nil)
	budget := 1.0
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"ollama/llama3.1:8b", "vllm/Qwen/Qwen3-8B", "sglang/m", "lmstudio/qwen3-8b"},
		Rules: coordination.Rules{CostBudgetUSD: &budget}}
	est, err := h.Service.Estimate(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Unpriced) != 0 || est.RoundCostUSD != 0 || est.Problem != "" {
		t.Fatalf("estimate: %s", coordtest.JSON(est))
	}
	for _, a := range est.Agents {
		if a.CostUSD == nil || *a.CostUSD != 0 || a.SessionCostUSD == nil || *a.SessionCostUSD != 0 {
			t.Errorf("%s (%s): cost %s, want a known $0", a.AgentID, a.Model, coordtest.JSON(a))
		}
	}
}

// TestACostBudgetRefusesATeamWithAnAgentItCannotPrice: an agent whose
// model has no list price (an openrouter model here) would count as $0
// against a cost budget, which then never stops it. Create refuses such a
// team before anything is written or called, naming the agent and its
// model and both ways out; a token budget, or the agent's own prices,
// let the same team in.
func TestACostBudgetRefusesATeamWithAnAgentItCannotPrice(t *testing.T) {
	calls := 0
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		calls++
		return coordtest.Answer("x"), providers.Free(), nil
	})
	h := coordtest.New(t, map[string]providers.Provider{"openrouter/qwen/qwen3-coder": p, "openai/gpt-5.4": p})
	budget := 5.0
	spec := coordination.TeamSpec{Task: "What is 17 * 23?",
		Agents: []coordination.Agent{{ID: "cheap", Model: "openrouter/qwen/qwen3-coder"}, {ID: "listed", Model: "openai/gpt-5.4"}},
		Rules:  coordination.Rules{CostBudgetUSD: &budget}}
	_, err := h.Service.Create(context.Background(), spec)
	if !errors.Is(err, coordination.ErrBadInput) || !errors.Is(err, coordination.ErrUnpriced) {
		t.Fatalf("want the team refused as bad input, got %v", err)
	}
	for _, want := range []string{"cheap (openrouter/qwen/qwen3-coder)", "price_in", "price_out", "USD per 1M tokens", "team file", "token_budget"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "listed") {
		t.Errorf("the refusal names the priced agent too: %v", err)
	}
	if ids, _ := h.Store.Sessions(context.Background()); len(ids) != 0 || calls != 0 {
		n := len(ids)
		t.Fatalf("a refused team wrote %d sessions and made %d calls", n, calls)
	}
	est, err := h.Service.Estimate(spec)
	if err != nil || !errors.Is(est.Err(), coordination.ErrUnpriced) || !strings.Contains(est.Problem, "cheap (openrouter/qwen/qwen3-coder)") {
		t.Fatalf("the estimate must show the same refusal: %v, %v", err, coordtest.JSON(est))
	}

	tokens := int64(1_000_000)
	byTokens := spec
	byTokens.Rules = coordination.Rules{TokenBudget: &tokens}
	if _, err := h.Service.Create(context.Background(), byTokens); err != nil {
		t.Fatalf("a token budget bounds the same team: %v", err)
	}
	priced := spec
	priced.Agents = []coordination.Agent{{ID: "cheap", Model: "openrouter/qwen/qwen3-coder", PriceIn: new(0.3), PriceOut: new(1.2)}, spec.Agents[1]}
	if _, err := h.Service.Create(context.Background(), priced); err != nil {
		t.Fatalf("with the agent's own prices the budget bounds it: %v", err)
	}
}

// TestACostBudgetNeverRefusesAgentsThatCostNothingOrHaveADefaultModel:
// the host agent and a person (human) cost nothing, a self-hosted model
// costs a known $0, and a bare codex means its default model, which is
// listed: none of them is refused under a cost budget.
func TestACostBudgetNeverRefusesAgentsThatCostNothingOrHaveADefaultModel(t *testing.T) {
	free := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		return coordtest.Answer("x"), providers.Free(), nil
	})
	h := coordtest.New(t, map[string]providers.Provider{"codex/gpt-5.4": free, "human": free, "ollama/llama3.1:8b": free})
	budget := 5.0
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"host", "human", "codex", "ollama/llama3.1:8b"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}}
	est, err := h.Service.Estimate(spec)
	if err != nil || len(est.Unpriced) != 0 || est.Err() != nil {
		t.Fatalf("estimate: %v, %s", err, coordtest.JSON(est))
	}
	if _, err := h.Service.Create(context.Background(), spec); err != nil {
		t.Fatalf("a team of agents that are all priced or free was refused: %v", err)
	}
}

// unpricedAPI wraps a provider so that its usage comes back as an API's
// does for a model with no list price: tokens, and no cost.
func unpricedAPI(p providers.Provider, in, out int64) providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		a, u, err := p.Step(ctx, req)
		u.Input, u.Output, u.CostUSD = in, out, nil
		return a, u, err
	})
}

// TestAnAgentsOwnPricesCostItsLandedSteps: a team file's price_in and
// price_out (USD per 1M tokens) price every step of an agent whose model
// has no list price, so the ledger, the result and the budget count what
// it spent, where before it landed as an unknown cost.
func TestAnAgentsOwnPricesCostItsLandedSteps(t *testing.T) {
	_, sc, _ := coordtest.Team(t, 2)
	// 1M input tokens at $2 and 100k output at $10: $3 a step.
	h := coordtest.New(t, map[string]providers.Provider{
		"openrouter/a": unpricedAPI(sc[0], 1_000_000, 100_000), "openrouter/b": unpricedAPI(sc[1], 1_000_000, 100_000)})
	budget := 100.0
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{
		{Model: "openrouter/a", PriceIn: new(2.0), PriceOut: new(10.0)}, {Model: "openrouter/b", PriceIn: new(2.0), PriceOut: new(10.0)}},
		Rules: coordination.Rules{CostBudgetUSD: &budget}})
	res := h.Run(s.ID)
	steps := 0
	for agent, entries := range h.Ledger(s.ID).Agents {
		for _, e := range entries {
			steps++
			if e.Usage.CostUSD == nil || math.Abs(*e.Usage.CostUSD-3) > 1e-9 {
				t.Errorf("%s's step %d cost %v; want $3 at its own prices", agent, e.Step, dollars(e.Usage.CostUSD))
			}
		}
	}
	if steps == 0 || res.CostUSD == nil || math.Abs(*res.CostUSD-3*float64(steps)) > 1e-6 || !res.BudgetEnforced {
		t.Fatalf("%d steps; want the result to cost $3 each: %s", steps, coordtest.JSON(res))
	}
}

// TestAnAgentsOwnPricesBindTheBudgetWithinAStep: the tool loop of an agent
// with no list price reports its usage turn by turn, unpriced; its own
// prices price each report, so a $1 budget stops two such loops within a
// turn each of it, as it stops listed models (before, these reports
// counted $0 and nothing stopped the loops short of their own limits).
func TestAnAgentsOwnPricesBindTheBudgetWithinAStep(t *testing.T) {
	const budget, turn = 1.0, 0.05
	inner := loopingAPI(0, 200, nil)
	// Each turn is 1,000 input and 100 output tokens: at $40 and $100 per
	// 1M, $0.05.
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if s := req.Spend; s != nil {
			req.Spend = providers.SpendFunc(func(u providers.Usage) string {
				u.CostUSD = nil
				return s.Used(u)
			})
		}
		a, u, err := inner.Step(ctx, req)
		u.CostUSD = nil
		return a, u, err
	})
	h := coordtest.New(t, map[string]providers.Provider{"openrouter/a": p, "openrouter/b": p})
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{
		{Model: "openrouter/a", PriceIn: new(40.0), PriceOut: new(100.0), MaxOutputTokens: 100},
		{Model: "openrouter/b", PriceIn: new(40.0), PriceOut: new(100.0), MaxOutputTokens: 100}},
		Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	res := h.Run(s.ID)
	if coordination.Deref(res.StopReason) != coordination.StopBudget {
		t.Fatalf("want the run ended by its budget: %s", coordtest.JSON(res))
	}
	if res.CostUSD == nil || *res.CostUSD < budget || *res.CostUSD > budget+2*turn+1e-9 {
		t.Fatalf("spent $%.4f; want the budget met and at most a turn per agent past it ($%.2f)", dollars(res.CostUSD), budget+2*turn)
	}
}

// TestAnAgentsOwnPricesAreCheckedAtCreate: prices come both or neither,
// each a finite number of USD per 1M tokens, 0 or more, however the
// agent was built.
func TestAnAgentsOwnPricesAreCheckedAtCreate(t *testing.T) {
	h := coordtest.New(t, map[string]providers.Provider{"openrouter/a": &coordtest.Scripted{}, "openrouter/b": &coordtest.Scripted{}})
	for _, tc := range []struct {
		in, out *float64
		want    string
	}{
		{new(-1.0), new(1.0), "agent agent_a: price_in -1 must be a number of USD per 1M tokens, 0 or more"},
		{new(1.0), new(math.Inf(1)), "agent agent_a: price_out +Inf must be a number of USD per 1M tokens"},
		{new(1.0), nil, "agent agent_a: give both price_in and price_out"},
	} {
		_, err := h.Service.Create(context.Background(), coordination.TeamSpec{Task: "t", Agents: []coordination.Agent{
			{Model: "openrouter/a", PriceIn: tc.in, PriceOut: tc.out}, {Model: "openrouter/b"}}})
		if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want bad input saying %q", err, tc.want)
		}
	}
}

// TestAnOperatorsPricesPriceASelfHostedAgent: a self-hosted backend costs
// a known $0 because the server is taken to be the operator's own; an
// operator who gives such an agent price_in/price_out (a vllm URL that is
// a paid endpoint) says otherwise, and the estimate uses those prices,
// where before it kept the $0 and the prices did nothing.
func TestAnOperatorsPricesPriceASelfHostedAgent(t *testing.T) {
	h := coordtest.New(t, nil)
	est, err := h.Service.Estimate(coordination.TeamSpec{Task: "What is 17 * 23?", Agents: []coordination.Agent{
		{Model: "vllm/Qwen/Qwen3-8B", PriceIn: new(2.0), PriceOut: new(10.0), MaxOutputTokens: 1000},
		{Model: "ollama/llama3.1:8b"}},
		Rules: coordination.Rules{CostBudgetUSD: new(1.0)}})
	if err != nil {
		t.Fatal(err)
	}
	priced, free := est.Agents[0], est.Agents[1]
	if priced.CostUSD == nil || *priced.CostUSD < 1000*10.0/1e6 || !priced.OwnPrices {
		t.Errorf("the priced vllm agent: %s; want its own prices (at least $0.01 for 1,000 output tokens at $10 per 1M), marked own_prices", coordtest.JSON(priced))
	}
	if free.CostUSD == nil || *free.CostUSD != 0 || free.OwnPrices {
		t.Errorf("the unpriced ollama agent: %s; want a known $0", coordtest.JSON(free))
	}
}
