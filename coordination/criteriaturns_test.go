package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// finishedTurn runs a first turn of a scripted pair to its end under
// rules r (max_rounds 4), and returns its session.
func finishedTurn(t *testing.T, h *coordtest.Harness, models []string, sc []*coordtest.Scripted, r coordination.Rules) *coordination.Session {
	t.Helper()
	r.MaxRounds = 4
	s := h.Create(coordination.TeamSpec{Models: models, Task: "Name a colour", Rules: r})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("red"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("blue"), coordtest.Vote(b)}
	if res := h.Run(s.ID); res.Status != coordination.StatusFinished {
		t.Fatalf("the first turn ended %s; want it finished", res.Status)
	}
	return s
}

// TestAFollowUpTurnsCriteriaAreBoundByTheTurnsBudget: criteria written for
// the next turn of a conversation (the interactive run's next line, run
// --continue --criteria auto: a Team that continues a session; or
// generate_eval_criteria{session_id} on a turn created by continue_from)
// are bound by the turn's budgets, inherited from the turn it continues
// when it names none, and are that turn's spend, never the earlier turn's.
// This held before it was written: the gap it was written for does not
// exist (estimateTeam reads the turn continued, and a created turn is a
// session like any other).
func TestAFollowUpTurnsCriteriaAreBoundByTheTurnsBudget(t *testing.T) {
	ctx := context.Background()
	large := int64(1_000_000)
	models, sc, provs := coordtest.Team(t, 2)
	var calls atomic.Int32
	writer, err := criteriaWriters(&calls)(providers.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	provs[criteriaModel], provs["openrouter/qwen/qwen3-coder"] = writer, writer
	h := coordtest.NewWith(t, provs, coordination.Options{Logger: zerolog.Nop(), Parallel: 8})
	next := func(from string) *coordination.TeamSpec {
		return &coordination.TeamSpec{ContinueFrom: from, Task: "Now a darker one"}
	}
	ask := func(spec *coordination.TeamSpec) error {
		set, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{Task: spec.Task, Model: criteriaModel, Count: 3, Team: spec})
		spec.Criteria, spec.CriteriaUsage = set.Items, set.Usage
		return err
	}

	// A first turn whose token budget pays for the next turn's round but
	// not for a criteria call besides (its worst case is over 8,000
	// tokens): the next turn names no budget, inherits it, and is refused
	// before the model is asked.
	e, err := h.Service.Estimate(coordination.TeamSpec{Models: models, Task: "Name a colour"})
	if err != nil {
		t.Fatal(err)
	}
	small := e.RoundTokens + 2_000
	tight := finishedTurn(t, h, models, sc, coordination.Rules{TokenBudget: &small})
	if err := ask(next(tight.ID)); !errors.Is(err, coordination.ErrCriteriaBudget) || !strings.Contains(err.Error(), "token_budget") {
		t.Fatalf("criteria for a follow-up turn whose inherited token_budget cannot take them: %v; want them refused, naming token_budget", err)
	}
	// The turn's own budget, named, binds it as well.
	own := next(tight.ID)
	own.Rules.TokenBudget = &small
	if err := ask(own); !errors.Is(err, coordination.ErrCriteriaBudget) {
		t.Fatalf("criteria for a follow-up turn whose own token_budget cannot take them: %v; want them refused", err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the criteria model was called %d times for follow-up turns whose budget cannot pay; want 0", n)
	}

	// Room for them: the call is made, and its spend is the new turn's.
	roomy := finishedTurn(t, h, models, sc, coordination.Rules{TokenBudget: &large})
	_, before := sessionSpend(t, h.Service, roomy.ID)
	spec := next(roomy.ID)
	if err := ask(spec); err != nil {
		t.Fatal(err)
	}
	turn := h.Create(*spec)
	if _, tokens := sessionSpend(t, h.Service, turn.ID); tokens != 1200 {
		t.Errorf("the follow-up turn created with its criteria spent %d tokens; want 1200 (the criteria call's)", tokens)
	}

	// generate_eval_criteria{session_id} on a turn created by continue_from.
	later := h.Create(*next(roomy.ID))
	if _, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{SessionID: later.ID, Model: criteriaModel, Count: 3}); err != nil {
		t.Fatal(err)
	}
	if _, tokens := sessionSpend(t, h.Service, later.ID); tokens != 1200 {
		t.Errorf("a follow-up turn's criteria call for it spent %d tokens of it; want 1200", tokens)
	}
	if _, after := sessionSpend(t, h.Service, roomy.ID); after != before {
		t.Errorf("the turn continued went from %d to %d tokens; the follow-ups' criteria are theirs, not its", before, after)
	}

	// A created follow-up turn's budgets are the ones it inherited: a cost
	// budget refuses a criteria model it cannot price, before it is asked.
	dollars := 5.0
	priced := finishedTurn(t, h, models, sc, coordination.Rules{CostBudgetUSD: &dollars})
	_, err = h.Service.Criteria(ctx, coordination.CriteriaRequest{SessionID: h.Create(*next(priced.ID)).ID, Model: "openrouter/qwen/qwen3-coder", Count: 3})
	if !errors.Is(err, coordination.ErrUnpriced) {
		t.Errorf("generate_eval_criteria by an unpriced model on a follow-up turn with an inherited cost budget: %v; want it refused as unpriced", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the criteria model was called %d times; want 2", n)
	}
}
