package coordination_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A winner forced by a stop is not a team's verdict, and the result says so
// with the spend against the budget; an agreed winner carries no such note.
func TestABudgetStopSaysTheAnswerWasNotAgreed(t *testing.T) {
	costly := func() providers.Provider {
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			u := providers.Free()
			*u.CostUSD, u.Input, u.Output = 0.49, 100, 10
			return coordtest.Answer("Answer: 4 from " + req.AgentID), u, nil
		})
	}
	h := coordtest.New(t, map[string]providers.Provider{"openai/gpt-5-mini": costly(), "openai/gpt-5-nano": costly()})
	budget := 1.0
	s := h.Create(coordination.TeamSpec{Models: []string{"openai/gpt-5-mini", "openai/gpt-5-nano"}, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || coordination.Deref(res.StopReason) != coordination.StopBudget || coordination.Deref(res.HowChosen) != coordination.ChosenForcedFirst {
		t.Fatalf("want a budget stop with a forced_first winner: %s", coordtest.JSON(res))
	}
	want := regexp.MustCompile(`^stopped by budget after \$0\.98 of \$1\.00: agent_[ab]'s answer was taken first-come, without agreement$`)
	if !want.MatchString(res.NotAgreed) || res.NotAgreed[len("stopped by budget after $0.98 of $1.00: "):][:7] != res.Winner.AgentID || coordination.Agreed(res) {
		t.Errorf("not_agreed = %q (winner %s), want %s", res.NotAgreed, res.Winner.AgentID, want)
	}

	// One step at a time, as the seeded ledger digest runs them: with steps in
	// parallel, which answers each sim's step sees depends on the scheduler,
	// and on a loaded machine this team ran to max_rounds without agreeing.
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Parallel: 1})
	seed := int64(1)
	s2, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim/strong", "sim/strong"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	agreed, err := svc.Run(context.Background(), s2.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if coordination.Deref(agreed.HowChosen) != coordination.ChosenConsensus || agreed.NotAgreed != "" || !coordination.Agreed(agreed) {
		t.Errorf("a consensus result: how %s, not_agreed %q", coordination.Deref(agreed.HowChosen), agreed.NotAgreed)
	}
}

// A run stopped by its timeout says how much of it its runs used, not how
// old the session is: one started a second after it was created (or
// resumed after an interruption) used its 300 ms, not 1.3 s of them.
func TestATimeoutStopCountsTheRunsTimeNotTheSessionsAge(t *testing.T) {
	stall := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	h := coordtest.New(t, map[string]providers.Provider{"openai/quick": &coordtest.Scripted{}, "claude/stalls": stall})
	s := h.Create(coordination.TeamSpec{Models: []string{"openai/quick", "claude/stalls"}, Rules: coordination.Rules{TimeoutSeconds: 0.3}})
	time.Sleep(time.Second)
	res := h.Run(s.ID)
	if want := "stopped by the timeout after 300ms of 300ms waiting on agent_b"; !strings.HasPrefix(res.NotAgreed, want) {
		t.Errorf("not_agreed %q; want it to begin %q", res.NotAgreed, want)
	}
}

// A run stopped by its timeout names who was still working: the stalled
// provider is who kept the team from agreeing.
func TestATimeoutStopNamesTheAgentStillWorking(t *testing.T) {
	stall := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	h := coordtest.New(t, map[string]providers.Provider{"openai/quick": &coordtest.Scripted{}, "claude/stalls": stall})
	s := h.Create(coordination.TeamSpec{Models: []string{"openai/quick", "claude/stalls"}, Rules: coordination.Rules{TimeoutSeconds: 0.3}})
	res := h.Run(s.ID)
	want := regexp.MustCompile(`^stopped by the timeout after [0-9.]+m?s of 300ms waiting on agent_b \(stalls\): agent_a's answer was taken first-come, without agreement$`)
	if coordination.Deref(res.StopReason) != coordination.StopTimeout || !want.MatchString(res.NotAgreed) {
		t.Errorf("stop %s, not_agreed %q; want %s", coordination.Deref(res.StopReason), res.NotAgreed, want)
	}
}

// A timeout with no answer at all still names the stalled provider, in the
// result's note.
func TestATimeoutWithoutAnAnswerNamesTheStalledProvider(t *testing.T) {
	stall := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Usage{}, ctx.Err()
	})
	h := coordtest.New(t, map[string]providers.Provider{"claude/stalls": stall, "openai/stalls-too": stall})
	s := h.Create(coordination.TeamSpec{Models: []string{"claude/stalls", "openai/stalls-too"}, Rules: coordination.Rules{TimeoutSeconds: 0.2}})
	res := h.Run(s.ID)
	want := regexp.MustCompile(`^stopped by the timeout after [0-9.]+m?s of 200ms waiting on agent_a \(stalls\), agent_b \(stalls-too\); nobody had answered$`)
	if res.Winner != nil || !want.MatchString(res.FinalNote) {
		t.Errorf("status %s, final_note %q; want %s", res.Status, res.FinalNote, want)
	}
}
