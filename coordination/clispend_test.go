package coordination_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// loopingCLI plays a CLI agent whose model answers every turn with another
// tool call, as providers/cliagent runs one: after each turn it reports the
// step's usage so far to req.Spend and stops when told the session's budget
// is spent (a budget error with its usage). Unstopped, it answers after
// 200 turns.
func loopingCLI(turnCost float64) providers.Provider {
	return loopingCLIEvery(turnCost, 200*time.Microsecond)
}

// loopingCLIEvery is loopingCLI whose turns take every.
func loopingCLIEvery(turnCost float64, every time.Duration) providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		u := providers.Free()
		for turn := 1; turn <= 200; turn++ {
			if err := ctx.Err(); err != nil {
				return providers.Action{}, u, err
			}
			time.Sleep(every)
			c := *u.CostUSD + turnCost
			u = providers.Usage{Input: u.Input + 1000, Output: u.Output + 100, CostUSD: &c}
			if req.Spend != nil {
				if why := req.Spend.Used(u); why != "" {
					return providers.Action{}, u, &providers.Error{Class: providers.ClassBudget, Message: "stopped: it " + why}
				}
			}
		}
		return coordtest.Answer("Answer: looped"), u, nil
	})
}

// mixedTeamUnderBudget runs a team of two looping CLI agents and a sim
// agent under a cost budget, every step in flight at once, and returns what
// it spent and the largest turn cost.
func mixedTeamUnderBudget(t *testing.T, seed int64, budget float64) (cost, turn float64, res *coordination.TeamResult) {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	open := func(sp providers.Spec) (providers.Provider, error) {
		switch sp.Backend {
		case "claude_code", "codex":
			c := 0.02 + 0.06*rng.Float64()
			turn = max(turn, c)
			return loopingCLI(c), nil
		}
		return backends.Open(sp)
	}
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: open, Parallel: 8})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Seed: &seed,
		Models: []string{"claude_code", "codex", "sim/strong"}, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	res, err = svc.Run(context.Background(), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CostUSD == nil {
		t.Fatalf("seed %d: no cost in %s", seed, coordtest.JSON(res))
	}
	return *res.CostUSD, turn, res
}

// TestABudgetEndsARunOfLoopingCLIAgentsWithinATurnEach pins issue 26's
// `--budget 1` on a mixed team: CLI steps that would loop for $10 each are
// stopped as the session's spend, counted over every step in flight, meets
// the budget, so the run ends under it plus at most one turn per agent in
// flight. It reports the overshoot over 20 seeds.
func TestABudgetEndsARunOfLoopingCLIAgentsWithinATurnEach(t *testing.T) {
	const budget = 1.0
	var over []float64
	for seed := int64(1); seed <= 20; seed++ {
		cost, turn, res := mixedTeamUnderBudget(t, seed, budget)
		if res.StopReason == nil || *res.StopReason != coordination.StopBudget {
			t.Fatalf("seed %d: stop reason %v, want budget: %s", seed, res.StopReason, coordtest.JSON(res))
		}
		if limit := budget + 2*turn; cost > limit {
			t.Fatalf("seed %d: spent $%.4f, more than the budget plus one turn per CLI in flight ($%.4f)", seed, cost, limit)
		}
		over = append(over, max(0, cost-budget)/budget)
	}
	slices.Sort(over)
	t.Logf("--budget %.0f overshoot over 20 seeds: max %.1f%%, median %.1f%% of the budget", budget, 100*over[len(over)-1], 100*(over[9]+over[10])/2)
}

// TestEveryBudgetedStepIsGivenTheSessionsSpend: without a budget a step
// on a store that shares no spend (memory, files) gets no Spend; with one,
// each step does. (On PostgreSQL every step gets one:
// TestADeadReplicasAPIStepSpendIsRecordedByTheStepThatTakesItOver.)
func TestEveryBudgetedStepIsGivenTheSessionsSpend(t *testing.T) {
	for _, budget := range []*float64{nil, new(float64)} {
		if budget != nil {
			*budget = 5
		}
		saw := make(chan bool, 16)
		p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			saw <- req.Spend != nil
			return coordtest.Answer("Answer: 4"), providers.Free(), nil
		})
		h := coordtest.New(t, map[string]providers.Provider{"sim": p})
		s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "a", Model: "sim"}}, Rules: coordination.Rules{CostBudgetUSD: budget, MaxRounds: 1}})
		h.Run(s.ID)
		close(saw)
		for got := range saw {
			if got != (budget != nil) {
				t.Fatalf("budget %v: the step's Spend set = %v", budget, got)
			}
		}
	}
}

// unsharedSpend is a store whose step locks say they share a step's spend
// with other replicas but never can (a database that does not answer), or,
// with hang set, whose shares never return until hang is closed.
type unsharedSpend struct {
	coordination.Store
	tries atomic.Int32
	hang  chan struct{}
}

type unsharedLock struct {
	coordination.StepLock
	u *unsharedSpend
}

func (u *unsharedSpend) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := u.Store.LockStep(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	return &unsharedLock{StepLock: l, u: u}, nil
}

func (l *unsharedLock) ShareSpend(context.Context, float64, int64) (float64, int64, error) {
	l.u.tries.Add(1)
	if l.u.hang != nil {
		<-l.u.hang
	}
	return 0, 0, errors.New("the database did not answer")
}

func (l *unsharedLock) SpendKey() string                              { return "" }
func (l *unsharedLock) TakenOverSpend() []coordination.InheritedSpend { return nil }

// cliPairUnderBudget runs two looping CLI agents (turns of turn) on st
// under a $1 budget and checks the budget stopped them within a turn
// each; what is the run, for the failure's words.
func cliPairUnderBudget(t *testing.T, st coordination.Store, what string) *coordination.TeamResult {
	t.Helper()
	const budget, turn = 1.0, 0.02
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Parallel: 2,
		Open: func(providers.Spec) (providers.Provider, error) { return loopingCLI(turn), nil }})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"}, Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason == nil || *res.StopReason != coordination.StopBudget || res.CostUSD == nil || *res.CostUSD > budget+2*turn+1e-9 {
		t.Fatalf("%s: %s", what, coordtest.JSON(res))
	}
	return res
}

// TestABudgetBindsWhenTheSpendCannotBeShared: a store that cannot share a
// step's spend leaves each step counting its own process's steps, so the
// budget still binds within a turn per agent, and a step stops asking the
// store at every turn (one try per step here, not one per turn).
func TestABudgetBindsWhenTheSpendCannotBeShared(t *testing.T) {
	st := &unsharedSpend{Store: memstore.New()}
	res := cliPairUnderBudget(t, st, "the run without shared spend")
	if tries := int(st.tries.Load()); tries == 0 || tries > res.Steps+2 {
		t.Errorf("the store was asked to share spend %d times over %d steps; want once a step", tries, res.Steps)
	}
}

// TestAShareThatNeverAnswersDoesNotHoldTheStepsReports: a CLI reports its
// usage as its stream goes, holding its own lock; a share of the spend
// runs beside the reports, so a database that never answers does not hold
// them (here the share ignores its context: a report waiting on it would
// never return), and the budget binds on this process's count.
func TestAShareThatNeverAnswersDoesNotHoldTheStepsReports(t *testing.T) {
	st := &unsharedSpend{Store: memstore.New(), hang: make(chan struct{})}
	defer close(st.hang)
	cliPairUnderBudget(t, st, "the run beside shares that never answer")
	if st.tries.Load() == 0 {
		t.Error("no share was tried")
	}
}
