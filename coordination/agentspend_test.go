package coordination_test

import (
	"context"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestACancelledCallsSpendIsInItsAgentsRow: a call stopped mid-way (a
// cancel, a timeout, a budget stop) is paid for, and the session records
// its spend as a usage entry naming the agent. The result's agents rows
// (team_status', status.json's and the CLI's per-agent tokens and cost)
// must count it for that agent, as the session's total does: otherwise the
// rows add up to less than the total and the agent that burned the budget
// (a stalled CLI agent a timeout cut after minutes) reads as having cost
// nothing.
func TestACancelledCallsSpendIsInItsAgentsRow(t *testing.T) {
	calling := make(chan struct{})
	var once sync.Once
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	cheap := 0.01
	provs := map[string]providers.Provider{
		a.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			return coordtest.Answer("Answer: 4"), providers.Usage{Input: 10, Output: 5, CostUSD: &cheap}, nil
		}),
		b.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			once.Do(func() { close(calling) })
			<-ctx.Done()
			cost := 0.125
			return providers.Action{}, providers.Usage{Input: 300, Output: 40, CostUSD: &cost}, ctx.Err()
		}),
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}}})
	r, _, err := h.Service.Start(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-calling
	r.Cancel()
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.CostUSD == nil || *res.CostUSD < 0.125 || res.Usage.Input < 300 {
		t.Fatalf("the session does not count the cancelled call; the test tests nothing: %s", coordtest.JSON(res))
	}
	var rowSum float64
	var rowIn int64
	for _, row := range res.Agents {
		if row.CostUSD != nil {
			rowSum += *row.CostUSD
		}
		rowIn += row.Usage.Input
		if row.AgentID == "agent_b" && (row.CostUSD == nil || *row.CostUSD != 0.125 || row.Usage.Input != 300) {
			t.Errorf("agent_b's row: cost %s, input %d; want its cancelled call's $0.125 and 300 tokens", coordtest.JSON(row.CostUSD), row.Usage.Input)
		}
	}
	if rowSum != *res.CostUSD || rowIn != res.Usage.Input {
		t.Errorf("the agents' rows add up to $%.3f and %d input tokens, the session to $%.3f and %d", rowSum, rowIn, *res.CostUSD, res.Usage.Input)
	}
}
