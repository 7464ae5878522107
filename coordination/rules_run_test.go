package coordination_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// Item 9: a cancel made by another process (here a second service over its
// own store on the same directory) reaches the running loop through the
// store's watch within a second: its provider calls are cancelled, and its
// summary counts every step that landed.
func TestCancelFromAnotherProcessStopsTheRunWithinASecond(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	runner := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	other := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	seed := int64(4)
	s, err := runner.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim:latency=1h", "sim:latency=1h"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := runner.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the quick agent's answer, while the slow ones are calling.
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := runner.Store().Ledger(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Agents["agent_a"]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the quick agent never answered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if _, err := other.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(3 * time.Second): // the rule is one second; the slack is for a loaded machine
		t.Fatal("the running loop did not see the other process's cancel")
	}
	took := time.Since(start)
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	l, _ := runner.Store().Ledger(ctx, s.ID)
	entries := 0
	for _, es := range l.Agents {
		entries += len(es)
	}
	if res.Status != coordination.StatusCancelled || res.Steps != entries {
		t.Fatalf("after %v: status %s, steps %d with %d landed", took, res.Status, res.Steps, entries)
	}
	t.Logf("the run stopped %v after the cancel", took)
}

// Item 4: a cancelled provider call's reported usage is the session's:
// counted in its usage and cost, not as a step or a failure.
func TestCancelledCallsUsageCountsInTheSession(t *testing.T) {
	calling := make(chan struct{})
	var once sync.Once
	sp, _ := providers.ParseSpec("sim:seed=9")
	provs := map[string]providers.Provider{sp.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		once.Do(func() { close(calling) })
		<-ctx.Done()
		cost := 0.125
		return providers.Action{}, providers.Usage{Input: 300, Output: 40, CostUSD: &cost}, ctx.Err()
	})}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: sp.String()}}})
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
	if res.Status != coordination.StatusCancelled || res.Steps != 0 || res.Usage.Input != 300 || res.CostUSD == nil || *res.CostUSD != 0.125 {
		t.Fatalf("cancelled run: %s", coordtest.JSON(res))
	}
	if n := len(h.Ledger(s.ID).Agents["agent_a"]); n != 0 {
		t.Fatalf("the cancelled call became %d entries", n)
	}
}

// Item 13: a step-driven present/synthesize session nobody finalizes does
// not sit decided for ever: past its timeout the next look finishes it with
// the winner's answer as is (no final call).
func TestDecidedStepSessionFinishesWithTheWinnerAtItsTimeout(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h := coordtest.New(t, provs)
	h.Service = coordination.NewService(h.Store, coordination.Options{Open: h.Open, Now: clock})
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Models: models, Rules: coordination.Rules{Final: coordination.FinalPresent, TimeoutSeconds: 60}})
	sc[0].Replies = []any{coordtest.Answer("Answer: 4"), coordtest.Vote(coordtest.Alias(s, "agent_b"))}
	sc[1].Replies = []any{coordtest.Answer("Answer: four"), coordtest.Vote(coordtest.Alias(s, "agent_b"))}
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b", "agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := h.Service.Status(ctx, s.ID)
	if err != nil || st.Result.Status != coordination.StatusDecided {
		t.Fatalf("after the votes: %v, %v", st.Result.Status, err)
	}
	calls := len(sc[1].Requests())
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	st, err = h.Service.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := st.Result
	if res.Status != coordination.StatusFinished || res.Winner.AgentID != "agent_b" || *res.FinalAnswer != "Answer: four" {
		t.Fatalf("past the timeout: %s", coordtest.JSON(res))
	}
	if n := len(sc[1].Requests()); n != calls {
		t.Fatalf("the winner strategy makes no final call; %d were made", n-calls)
	}
}

// Item 4: a run launches no step whose expected cost (the mean of the
// steps landed so far) no longer fits in what the budget leaves; with
// nothing in flight the budget then ends the session, within its limit.
func TestBudgetLaunchesNoStepItCannotAfford(t *testing.T) {
	provs := map[string]providers.Provider{}
	var agents []coordination.Agent
	for i, id := range []string{"agent_a", "agent_b"} {
		sp, _ := providers.ParseSpec(fmt.Sprintf("sim:seed=%d", 20+i))
		n := 0
		var mu sync.Mutex
		provs[sp.String()] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			cost := 0.1
			return coordtest.Answer(fmt.Sprintf("Answer: %s %d", id, n)), providers.Usage{Input: 10, Output: 5, CostUSD: &cost}, nil
		})
		agents = append(agents, coordination.Agent{ID: id, Model: sp.String()})
	}
	h := coordtest.New(t, provs)
	budget := 0.25
	s := h.Create(coordination.TeamSpec{Agents: agents, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	res := h.Run(s.ID)
	if *res.StopReason != coordination.StopBudget || res.Steps != 2 || res.CostUSD == nil || *res.CostUSD > budget {
		t.Fatalf("budget 0.25 at 0.1 a step: %s", coordtest.JSON(res))
	}
}

// TestABudgetCountsEveryLandedStepWhateverOrderTheirResultsCome: six agents
// land their first steps at once, and their results reach the run loop in
// any order; a result that comes after a later landing's carries an older
// state, and launching from it (a step it lacks counted nowhere) paid for a
// seventh step the budget had no room for.
func TestABudgetCountsEveryLandedStepWhateverOrderTheirResultsCome(t *testing.T) {
	for round := range 40 {
		provs := map[string]providers.Provider{}
		var agents []coordination.Agent
		for i := range 6 {
			id := fmt.Sprintf("agent_%c", 'a'+i)
			sp, _ := providers.ParseSpec(fmt.Sprintf("sim:seed=%d", 40+i))
			provs[sp.String()] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
				cost := 0.1
				return coordtest.Answer("Answer: " + id), providers.Usage{Input: 10, Output: 5, CostUSD: &cost}, nil
			})
			agents = append(agents, coordination.Agent{ID: id, Model: sp.String()})
		}
		h := coordtest.New(t, provs)
		budget := 0.65
		s := h.Create(coordination.TeamSpec{Agents: agents, Rules: coordination.Rules{CostBudgetUSD: &budget}})
		res := h.Run(s.ID)
		if res.StopReason == nil || *res.StopReason != coordination.StopBudget || res.Steps != 6 {
			t.Fatalf("round %d: budget 0.65 at 0.1 a step, six agents: %d steps, stop %v; want the six first steps and no seventh", round, res.Steps, res.StopReason)
		}
	}
}
