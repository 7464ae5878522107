package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// criteriaModel is a criteria writer priced by its spec (sim's own
// price_in/price_out): its worst case is about $0.34 (its prompt and
// coordination.DefaultEstimateOutputTokens of reply).
const criteriaModel = "sim:price_in=10:price_out=40"

// criteriaCallCost is what each criteria call reports spending.
const criteriaCallCost = 0.30

// criteriaWriters opens, for every spec, a provider that writes three valid
// criteria for $0.30 and 1,200 tokens a call (counted in calls), and
// answers an agent's step for free.
func criteriaWriters(calls *atomic.Int32) func(providers.Spec) (providers.Provider, error) {
	return func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(_ context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.Purpose != providers.PurposeCriteria {
				return coordtest.Answer("Answer: 391"), providers.Free(), nil
			}
			calls.Add(1)
			c := criteriaCallCost
			args := json.RawMessage(`{"criteria": [
				{"id": "E1", "text": "The product is exact.", "category": "must", "verify_by": "multiply it out", "anti_patterns": ["a rounded product", "no working"]},
				{"id": "E2", "text": "The working is shown.", "category": "should", "verify_by": "follow each line", "anti_patterns": ["a bare number", "skipped carries"]},
				{"id": "E3", "text": "It fits on one line.", "category": "could", "verify_by": "count the lines", "anti_patterns": ["a preamble", "a recap"]}]}`)
			return coordtest.Act(providers.ToolCall{Name: criteria.ToolSubmit, Args: args}), providers.Usage{Input: 1000, Output: 200, CostUSD: &c}, nil
		}), nil
	}
}

// sessionSpend is the session's cost and tokens as its status reports them.
func sessionSpend(t *testing.T, svc *coordination.Service, id string) (float64, int64) {
	t.Helper()
	st, err := svc.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	u := st.Result.Usage
	var c float64
	if st.Result.CostUSD != nil {
		c = *st.Result.CostUSD
	}
	return c, u.Input + u.Output
}

// criteriaSpendOn: criteria a model writes for a session are paid on the
// session's behalf, so their spend is the session's, counted once per call,
// while the call's own result still reports it; and a session whose budget
// cannot take another call's worst case is refused before the model is
// asked.
func criteriaSpendOn(t *testing.T, st coordination.Store) {
	ctx := context.Background()
	var calls atomic.Int32
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	budget := 0.80
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{criteriaModel, criteriaModel},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceGenerated || set.Usage == nil || set.Usage.CostUSD == nil || *set.Usage.CostUSD != criteriaCallCost || set.Usage.Tokens() != 1200 {
		t.Fatalf("the call's own result must report its spend: %s", coordtest.JSON(set))
	}
	cost, tokens := sessionSpend(t, svc, s.ID)
	if math.Abs(cost-criteriaCallCost) > 1e-9 || tokens != 1200 {
		t.Fatalf("after one criteria call the session spent $%.4f, %d tokens; want $0.30, 1200 tokens (the call's spend, once)", cost, tokens)
	}

	// $0.30 spent of $0.80: another call's worst case (about $0.34) fits.
	if _, err := svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3}); err != nil {
		t.Fatal(err)
	}
	cost, tokens = sessionSpend(t, svc, s.ID)
	if math.Abs(cost-2*criteriaCallCost) > 1e-9 || tokens != 2400 {
		t.Fatalf("after two criteria calls the session spent $%.4f, %d tokens; want $0.60, 2400 tokens", cost, tokens)
	}

	// $0.60 spent of $0.80: a third's worst case does not fit, and the
	// model is never asked.
	_, err = svc.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	if !errors.Is(err, coordination.ErrBudgetTooSmall) || !strings.Contains(err.Error(), "cost_budget_usd") {
		t.Fatalf("a third criteria call past the budget: %v; want it refused (budget too small), naming cost_budget_usd", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the criteria model was called %d times, want 2 (the third refused before it)", n)
	}
}

func TestCriteriaSpendIsTheSessionsAndBoundByItsBudget(t *testing.T) {
	t.Run("memory", func(t *testing.T) { criteriaSpendOn(t, memstore.New()) })
	t.Run("files", func(t *testing.T) { criteriaSpendOn(t, filestore.New(t.TempDir())) })
}

// TestATokenBudgetSpentRefusesCriteriaBeforeTheModel: a session whose
// token_budget a first criteria call has spent refuses the next before
// its model is asked.
func TestATokenBudgetSpentRefusesCriteriaBeforeTheModel(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := coordtest.NewWith(t, nil, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	budget := int64(60_000)
	s := h.Create(coordination.TeamSpec{Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep,
		Rules: coordination.Rules{TokenBudget: &budget}})
	// Spend all but 1,000 tokens of it, as a first call would have.
	for range 49 {
		if _, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3}); err != nil {
			_, tokens := sessionSpend(t, h.Service, s.ID)
			if tokens < budget-20_000 {
				t.Fatalf("refused with %d of %d tokens spent: %v", tokens, budget, err)
			}
			if !errors.Is(err, coordination.ErrBudgetTooSmall) || !strings.Contains(err.Error(), "token_budget") {
				t.Fatalf("refused as %v; want budget too small, naming token_budget", err)
			}
			return
		}
	}
	t.Fatalf("49 criteria calls of 1,200 tokens each were made in a token_budget of %d; want them refused once its worst case no longer fits", budget)
}

// TestACostBudgetRefusesACriteriaModelItCannotPrice: a criteria model with
// no list price would count as $0 against a cost budget, as an agent's
// would (coordination.ErrUnpriced): refused before it is called; under a
// token budget alone it is asked.
func TestACostBudgetRefusesACriteriaModelItCannotPrice(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := coordtest.NewWith(t, nil, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	cost := 5.0
	s := h.Create(coordination.TeamSpec{Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep,
		Rules: coordination.Rules{CostBudgetUSD: &cost}})
	_, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: "openrouter/qwen/qwen3-coder", Count: 3})
	if !errors.Is(err, coordination.ErrUnpriced) || !strings.Contains(err.Error(), "openrouter/qwen/qwen3-coder") || !strings.Contains(err.Error(), "token_budget") {
		t.Fatalf("an unpriced criteria model under a cost budget: %v; want it refused as unpriced, naming the model and token_budget", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the unpriced model was called %d times, want 0", n)
	}
	tokens := int64(100_000)
	s = h.Create(coordination.TeamSpec{Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep,
		Rules: coordination.Rules{TokenBudget: &tokens}})
	if _, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: "openrouter/qwen/qwen3-coder", Count: 3}); err != nil {
		t.Fatalf("under a token budget the unpriced model must be asked: %v", err)
	}
}

// TestCriteriaSpendBeforeTheSessionIsItsOnceCreated: run --criteria auto
// writes the criteria before the session exists; the spec carries the
// call's spend, and the new session's totals hold it once.
func TestCriteriaSpendBeforeTheSessionIsItsOnceCreated(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := coordtest.NewWith(t, nil, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	set, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{Task: "What is 17 * 23?", Model: criteriaModel, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := h.Create(coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep,
		Criteria: set.Items, CriteriaUsage: set.Usage})
	cost, tokens := sessionSpend(t, h.Service, s.ID)
	if math.Abs(cost-criteriaCallCost) > 1e-9 || tokens != 1200 {
		t.Fatalf("a session created with criteria written for it spent $%.4f, %d tokens; want $0.30, 1200 tokens (the criteria call's)", cost, tokens)
	}
}

// TestCriteriaForATeamNotYetCreatedAreBoundByItsBudgets: criteria written
// before their session exists (run --criteria auto) are bound by the
// budgets the team will have: an unpriced model under a cost budget, or a
// token budget the call's worst case cannot fit, is refused before it is
// asked.
func TestCriteriaForATeamNotYetCreatedAreBoundByItsBudgets(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := coordtest.NewWith(t, nil, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	// A free team, whose round the budgets pay for with room for
	// 2,000 tokens more: less than a criteria call's worst case.
	e, err := h.Service.Estimate(coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	cost, tokens := 5.0, e.RoundTokens+2000
	_, err = h.Service.Criteria(ctx, coordination.CriteriaRequest{Task: "What is 17 * 23?", Model: "openrouter/qwen/qwen3-coder", Count: 3,
		Team: &coordination.TeamSpec{Models: []string{"sim", "sim"}, Rules: coordination.Rules{CostBudgetUSD: &cost}}})
	if !errors.Is(err, coordination.ErrUnpriced) {
		t.Errorf("an unpriced criteria model for a team with a cost budget: %v; want it refused as unpriced", err)
	}
	_, err = h.Service.Criteria(ctx, coordination.CriteriaRequest{Task: "What is 17 * 23?", Model: criteriaModel, Count: 3,
		Team: &coordination.TeamSpec{Models: []string{"sim", "sim"}, Rules: coordination.Rules{TokenBudget: &tokens}}})
	if !errors.Is(err, coordination.ErrBudgetTooSmall) || !strings.Contains(err.Error(), "token_budget") {
		t.Errorf("a criteria call for a team whose token_budget cannot take it: %v; want it refused, naming token_budget", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the criteria model was called %d times, want 0", n)
	}
}

// TestACriteriaCallsRecordShowsNoCredentials: the usage entry names the
// criteria model as every view does (providers.ShowSpec): a base URL's
// user info is the operator's proxy credentials, not for the ledger.
func TestACriteriaCallsRecordShowsNoCredentials(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := coordtest.NewWith(t, nil, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	s := h.Create(coordination.TeamSpec{Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep})
	if _, err := h.Service.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: "vllm/m@https://user:dummy-password@proxy.test/v1", Count: 3, CommandLine: true}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range h.Ledger(s.ID).Session {
		if e.Kind == coordination.SessionUsage {
			found = true
			if strings.Contains(e.Reason, "dummy-password") || !strings.Contains(e.Reason, "vllm/m@https://proxy.test/v1") {
				t.Errorf("the criteria call's usage entry reads %q; want the model shown without its credentials", e.Reason)
			}
		}
	}
	if !found {
		t.Fatal("no usage entry for the criteria call")
	}
}

// TestATeamItsBudgetRefusesSpendsNothingOnCriteria: criteria written for a
// team not yet created (run --criteria auto) are asked for only when its
// budget can pay for one round and, with it, the criteria call's worst
// case: a team Create would refuse pays for no criteria.
func TestATeamItsBudgetRefusesSpendsNothingOnCriteria(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	h := coordtest.NewWith(t, nil, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	team := func(budget float64) *coordination.TeamSpec {
		return &coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep,
			Rules: coordination.Rules{CostBudgetUSD: &budget}}
	}
	e, err := h.Service.Estimate(*team(100))
	if err != nil {
		t.Fatal(err)
	}
	ask := func(spec *coordination.TeamSpec) (criteria.Set, error) {
		return h.Service.Criteria(ctx, coordination.CriteriaRequest{Task: spec.Task, Model: criteriaModel, Count: 3, Team: spec})
	}

	// Three quarters of a round, more than the criteria call may cost:
	// Create refuses the team, so nothing is asked.
	small := team(e.RoundCostUSD * 3 / 4)
	if _, err := ask(small); !errors.Is(err, coordination.ErrBudgetTooSmall) || !strings.Contains(err.Error(), "one round") {
		t.Errorf("criteria for a team whose budget cannot pay for one round: %v; want the round's refusal", err)
	}
	if _, err := h.Service.Create(ctx, *small); !errors.Is(err, coordination.ErrBudgetTooSmall) {
		t.Fatalf("Create of the same team: %v; want it refused", err)
	}

	// A round fits, and so would the criteria call alone (about $0.34),
	// but not both: the round must still be paid for after the criteria.
	if _, err := ask(team(e.RoundCostUSD + 0.10)); !errors.Is(err, coordination.ErrCriteriaBudget) || !strings.Contains(err.Error(), "round") {
		t.Errorf("criteria for a team whose budget pays a round but not the call as well: %v; want the criteria call refused, naming the round", err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the criteria model was called %d times for teams refused; want 0", n)
	}

	// Room for both: the call is made, and its team is created.
	fits := team(e.RoundCostUSD + 0.50)
	set, err := ask(fits)
	if err != nil {
		t.Fatal(err)
	}
	fits.Criteria, fits.CriteriaUsage = set.Items, set.Usage
	if _, err := h.Service.Create(ctx, *fits); err != nil {
		t.Fatalf("a team whose budget pays for its criteria and a round: %v", err)
	}
}

// imagesRefused is a store that keeps a session's row but fails to store
// its images: a Create that fails after its store write.
type imagesRefused struct{ *memstore.Store }

func (imagesRefused) PutImage(context.Context, string, []byte) (string, error) {
	return "", errors.New("the disk refused the image")
}

// TestCriteriaSpendIsRecordedWhenCreateFailsAfterItsStoreWrite: a creation
// that fails after the session's row is stored (its images not kept) has
// still paid for its criteria; the stored session holds their spend, as
// its creation finished by asking again (under its id) would.
func TestCriteriaSpendIsRecordedWhenCreateFailsAfterItsStoreWrite(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	st := imagesRefused{memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	set, err := svc.Criteria(ctx, coordination.CriteriaRequest{Task: "What is 17 * 23?", Model: criteriaModel, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{criteriaModel, criteriaModel}, Driver: coordination.DriverStep,
		SessionID: "criteria-paid", Images: []coordination.ImageInput{{Data: testPNG(t, 4), From: "a.png"}},
		Criteria: set.Items, CriteriaUsage: set.Usage})
	if err == nil || !strings.Contains(err.Error(), "the disk refused the image") {
		t.Fatalf("Create whose images the store refuses: %v; want that refusal", err)
	}
	l, err := st.Ledger(ctx, "criteria-paid")
	if err != nil {
		t.Fatalf("the session's row must be stored before its images: %v", err)
	}
	var tokens int64
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage && e.Usage != nil {
			tokens += e.Usage.Tokens()
		}
	}
	if tokens != 1200 {
		t.Fatalf("the stored session's ledger holds %d tokens of usage; want 1200 (the criteria call's, paid before the failure)", tokens)
	}
}
