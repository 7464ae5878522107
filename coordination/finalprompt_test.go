package coordination_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestThePresentCallShowsTheChosenAnswerAfterItsAgentAnsweredAgain: a
// timeout chose agent_a's first answer (first-come: nobody had voted),
// while agent_a's next step, whose model had replied, landed after the end
// (DESIGN, "Forced ends and spend"). The final call comes after it (a
// run writes it once its steps drain; here finalize_team), so the present
// call is made with that late answer in the ledger. It is told "the team chose agentN.1 …
// use it as the primary basis": that answer must be among those it is
// shown, not only the agent's newer one, which the team never chose.
func TestThePresentCallShowsTheChosenAnswerAfterItsAgentAnsweredAgain(t *testing.T) {
	landedB2 := make(chan struct{})
	var aSteps, bSteps atomic.Int32
	var mu sync.Mutex
	var presented string
	cost := func(c float64) providers.Usage { return providers.Usage{Input: 10, Output: 5, CostUSD: &c} }
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	provs := map[string]providers.Provider{
		a.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose == providers.PurposePresent {
				mu.Lock()
				presented = req.Prompt
				mu.Unlock()
				return coordtest.Answer("presented"), cost(0), nil
			}
			if aSteps.Add(1) == 1 {
				return coordtest.Answer("the first answer of agent_a: 1"), cost(0.1), nil
			}
			<-landedB2 // its model replies as the budget is spent
			return coordtest.Answer("a later answer of agent_a: 3"), cost(0.1), nil
		}),
		b.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if bSteps.Add(1) == 1 {
				return coordtest.Answer("the answer of agent_b: 2"), cost(0.1), nil
			}
			return coordtest.Answer("a later answer of agent_b: 4"), cost(0.4), nil
		}),
	}
	var clockMu sync.Mutex
	now := time.Now()
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	h := coordtest.NewWith(t, provs, coordination.Options{Parallel: 8, Now: clock})
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Rules: coordination.Rules{Final: coordination.FinalPresent, TimeoutSeconds: 60},
		Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}}})
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
		clockMu.Lock()
		now = now.Add(time.Second) // agent_a's answer clearly first
		clockMu.Unlock()
	}
	late := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		late <- err
	}()
	for aSteps.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	// Past the timeout, agent_b's step decides the session by it and is
	// refused: decided, waiting for its final call (finalize_team, as a
	// step-driven session is).
	clockMu.Lock()
	now = now.Add(30 * time.Second)
	clockMu.Unlock()
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Fatal(err)
	}
	clockMu.Lock()
	now = now.Add(31 * time.Second)
	clockMu.Unlock()
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err == nil {
		t.Log("agent_b stepped past the timeout")
	}
	close(landedB2)
	if err := <-late; err != nil {
		t.Logf("the late step: %v", err)
	}
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason == nil || *res.StopReason != coordination.StopTimeout || res.Winner == nil || res.Winner.AgentID != "agent_a" ||
		res.Winner.Label != coordtest.Alias(s, "agent_a")+".1" {
		t.Fatalf("the test needs a timeout choosing agent_a's first answer: %s", coordtest.JSON(res))
	}
	if n := len(h.Ledger(s.ID).Agents["agent_a"]); n != 2 {
		t.Fatalf("agent_a has %d entries; the test needs its late answer landed", n)
	}
	mu.Lock()
	prompt := presented
	mu.Unlock()
	if prompt == "" {
		t.Fatalf("no present call was made: %s", coordtest.JSON(res))
	}
	if !strings.Contains(prompt, "The team chose "+res.Winner.Label) {
		t.Fatalf("the present call does not name the winner %s:\n%s", res.Winner.Label, prompt)
	}
	if !strings.Contains(prompt, "the first answer of agent_a: 1") {
		t.Errorf("the present call is told the team chose %s but is not shown it:\n%s", res.Winner.Label, prompt)
	}
}
