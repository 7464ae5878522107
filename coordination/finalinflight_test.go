package coordination_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAFinalCallCountsTheStepsStillInFlight: a step-driven pair under a $1
// budget, on unlistedModel priced by the operator at $10 in and $60 out a
// million tokens. agent_a's step lands for $0.30; agent_b's is still in its
// model (it will be paid $0.30 too, as a step's expected cost says) when
// the host finalizes with synthesize. The synthesize call's worst case
// (its prompt and 8,192 tokens of reply) is about $0.50: it fits the $0.70
// the ledger leaves, but not the $0.40 left once agent_b's step is counted,
// so the call is not made and agent_a's answer is used. Before, the check
// read the ledger alone, the call was made for $0.49, and with agent_b's
// step landing after it the session spent $1.09 of $1.
func TestAFinalCallCountsTheStepsStillInFlight(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var finals atomic.Int32
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		c := 0.30
		switch {
		case req.Purpose == providers.PurposeSynthesize || req.Purpose == providers.PurposePresent:
			finals.Add(1)
			return coordtest.Answer("FINAL"), providers.Usage{Input: 1000, Output: 8000}, nil
		case req.AgentID == "agent_b":
			close(entered)
			<-release // paid whatever became of the session meanwhile
		}
		return coordtest.Answer("Answer: 4 from " + req.AgentID), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
	})
	h := coordtest.New(t, map[string]providers.Provider{unlistedModel: p})
	in, out := 10.0, 60.0
	agent := func(id string) coordination.Agent {
		return coordination.Agent{ID: id, Model: unlistedModel, PriceIn: &in, PriceOut: &out}
	}
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{agent("agent_a"), agent("agent_b")}, Driver: coordination.DriverStep,
		Rules: coordination.Rules{CostBudgetUSD: new(1.0), Final: coordination.FinalSynthesize}})
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	stepped := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"})
		stepped <- err
	}()
	<-entered
	res, err := h.Service.Finalize(ctx, s.ID, coordination.FinalSynthesize)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	stepErr := <-stepped
	st, err := h.Service.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	cost := dollars(st.Result.CostUSD)
	t.Logf("%d synthesize calls; the session spent $%.4f of $1; final_note %q; agent_b's step: %v", finals.Load(), cost, res.FinalNote, stepErr)
	if n := finals.Load(); n != 0 {
		t.Errorf("the synthesize call was made %d times; want none, its worst case not fitting beside agent_b's step in flight", n)
	}
	if cost > 1.0+1e-9 {
		t.Errorf("the session spent $%.4f under a cost_budget_usd of $1.00", cost)
	}
	if math.Abs(cost-0.60) > 1e-9 {
		t.Errorf("cost $%.4f; want the two steps' $0.60", cost)
	}
	if coordination.Deref(res.FinalAnswer) != "Answer: 4 from agent_a" {
		t.Errorf("final answer %q; want agent_a's as it stands", coordination.Deref(res.FinalAnswer))
	}
	wantFinalSkipped(t, h, s.ID, "no synthesize call: ")
}
