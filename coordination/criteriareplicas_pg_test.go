package coordination_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestCriteriaCallsOnTwoReplicasCannotTogetherPassTheBudget: as
// TestConcurrentCriteriaCallsCannotTogetherPassTheBudget, but the two
// calls are made through two replicas of one PostgreSQL store: a $0.50
// cost_budget_usd pays for one criteria call's worst case (about $0.34)
// but not two. The first call is held inside its model on replica A while
// replica B asks: B must count A's reservation and refuse before its model
// is asked. Before, each replica saw only its own holds: both were made,
// $0.60 of $0.50.
func TestCriteriaCallsOnTwoReplicasCannotTogetherPassTheBudget(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	var callsA, callsB atomic.Int32
	openA, entered, release := heldFirstCriteriaCall(&callsA, nil)
	a := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: openA})
	b := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&callsB)})
	budget := 0.50
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() {
		_, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		firstDone <- err
	}()
	<-entered
	_, secondErr := b.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
	close(release)
	firstErr := <-firstDone
	cost, _ := sessionSpend(t, b, s.ID)
	t.Logf("criteria calls made: %d on A, %d on B; the session spent $%.4f of $0.50; A: %v; B: %v", callsA.Load(), callsB.Load(), cost, firstErr, secondErr)
	if firstErr != nil {
		t.Errorf("the first criteria call, on A, its worst case reserved: %v; want its criteria attached", firstErr)
	}
	if !errors.Is(secondErr, coordination.ErrBudgetTooSmall) {
		t.Errorf("the second call, on B, made while A's worst case was out: %v; want it refused (budget too small)", secondErr)
	}
	if n := callsB.Load(); n != 0 {
		t.Errorf("B's criteria model was called %d times; want never, its worst case not fitting beside A's", n)
	}
	if math.Abs(cost-criteriaCallCost) > 1e-9 {
		t.Errorf("the session spent $%.4f under a cost_budget_usd of $0.50; want $0.30, the one call", cost)
	}
}

// TestAStepOnAnotherReplicaCountsACriteriaCallsReservation: replica A's
// criteria call (worst case about $0.34, really $0.30) is held in its
// model while replica B steps a CLI agent looping at $0.02 a turn under a
// $1.00 budget. B's step must count A's reservation beside its own spend
// and stop near $0.66, so the session, once A's call lands, is within two
// turns of its budget. Before, B's step saw nothing of A's call, looped to
// $1.00, and A's $0.30 took the session to $1.30.
func TestAStepOnAnotherReplicaCountsACriteriaCallsReservation(t *testing.T) {
	const budget, turn = 1.0, 0.02
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	var calls atomic.Int32
	openA, entered, release := heldFirstCriteriaCall(&calls, nil)
	a := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: openA})
	b := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return loopingCLIEvery(turn, 20*time.Millisecond), nil
	}})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	if err != nil {
		t.Fatal(err)
	}
	criteriaDone := make(chan error, 1)
	go func() {
		_, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		criteriaDone <- err
	}()
	<-entered
	_, stepErr := b.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.Agents[0].ID})
	stepCost, _ := sessionSpend(t, b, s.ID)
	close(release)
	criteriaErr := <-criteriaDone
	cost, _ := sessionSpend(t, b, s.ID)
	t.Logf("B's step (%v) spent $%.2f beside A's held criteria call; with the call's $0.30 the session spent $%.2f of $%.2f (criteria: %v)", stepErr, stepCost, cost, budget, criteriaErr)
	if limit := budget + 2*turn + 1e-9; cost > limit {
		t.Errorf("the session spent $%.2f, more than its budget plus two turns ($%.2f): B's step did not count A's reservation", cost, limit)
	}
}

// letGoLost is a PostgreSQL store whose let-go of a criteria call's hold
// never reaches the database (a blip after the call's spend is recorded).
type letGoLost struct{ *pgstore.Store }

func (letGoLost) LetGoSpend(context.Context, string, string) error {
	return errors.New("the database did not answer")
}

// TestACriteriaCallsHoldGoesWithItsRecordedSpend: once a criteria call's
// spend is recorded, its hold must count no more on any replica, even when
// the let-go after the record is lost. Before, the hold (its worst case,
// about $0.34) went only by that let-go: lost, every replica counted it
// beside the $0.30 recorded until it expired (step_timeout_seconds and a
// minute, 11 minutes by default).
func TestACriteriaCallsHoldGoesWithItsRecordedSpend(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	var calls atomic.Int32
	st := letGoLost{pgTenant(t, dsn).(*pgstore.Store)}
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: criteriaWriters(&calls)})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(1.0)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3}); err != nil {
		t.Fatal(err)
	}
	b := pgTenant(t, dsn).(*pgstore.Store)
	hs, err := b.HoldSpend(ctx, s.ID, "probe", 0, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after the call, another replica reads $%.4f spent and $%.4f held", hs.SpentCost, hs.HeldCost)
	if math.Abs(hs.SpentCost-criteriaCallCost) > 1e-9 {
		t.Errorf("another replica reads $%.4f spent; want the call's $0.30", hs.SpentCost)
	}
	if hs.HeldCost != 0 || hs.HeldTokens != 0 {
		t.Errorf("another replica reads $%.4f and %d tokens still held by the call whose spend is recorded; want none", hs.HeldCost, hs.HeldTokens)
	}
}

// TestARunOnAnotherReplicaLaunchesNoStepIntoACriteriaCallsHold: as
// TestARunLaunchesNoStepIntoACriteriaCallsReservation, but the criteria
// call is held in its model on replica A (its worst case, about $0.33,
// shared in spend_holds) while replica B runs the session: a run-driven
// pair on criteriaModel capped at 2,000 output tokens (a first step's
// worst case about $0.09) under a cost_budget_usd of $0.40. B's launch
// must count A's hold beside the ledger, so no step starts ($0.33 +
// $0.09 > $0.40), and B's run neither ends the session by its budget nor
// launches until A's call has let it go. Before, a launch counted only
// its own replica's holds: B launched both steps into A's reservation.
func TestARunOnAnotherReplicaLaunchesNoStepIntoACriteriaCallsHold(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	var calls, steps atomic.Int32
	openA, entered, release := heldFirstCriteriaCall(&calls, nil)
	a := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: openA})
	openB, _, _ := heldFirstCriteriaCall(&calls, &steps)
	b := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: openB})
	budget := 0.40
	agent := func(id string) coordination.Agent {
		return coordination.Agent{ID: id, Model: criteriaModel, MaxOutputTokens: 2000}
	}
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Agents: []coordination.Agent{agent("agent_a"), agent("agent_b")},
		Driver: coordination.DriverRun, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	criteriaDone := make(chan error, 1)
	go func() {
		_, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		criteriaDone <- err
	}()
	<-entered
	runCtx, stop := context.WithCancel(ctx)
	r, _, err := b.Start(runCtx, s.ID)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	time.Sleep(time.Second) // B's loop's passes while A's call is out
	launched := steps.Load()
	st, err := b.Status(ctx, s.ID)
	close(release)
	criteriaErr := <-criteriaDone
	stop()
	<-r.Done()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d step(s) launched on B while A's criteria call held its worst case; status then %s; the criteria call: %v", launched, st.Result.Status, criteriaErr)
	if launched != 0 {
		t.Errorf("B launched %d step(s) beside A's criteria call's hold; want none ($0.33 held + $0.09 > $0.40)", launched)
	}
	if st.Result.Status != coordination.StatusRunning {
		t.Errorf("while A's criteria call was out the session was %s; want it still running, B's run waiting for the call", st.Result.Status)
	}
}

// TestACriteriaWriterSpendingPastItsReservationIsCountedOnAnotherReplica:
// replica A's criteria writer loops as a coding-agent CLI does, $0.05 a
// turn reported to the request's Spend, past its reservation (about
// $0.34) to $0.70, and is held there before it writes its criteria, while
// replica B steps a CLI agent looping at $0.02 a turn under a $1.00
// budget. A's hold must rise with the spend it reports, so B counts the
// $0.70 and stops near $0.30: the session, once A's call lands, is within
// two turns of its budget. Before, A's hold stayed at its reservation: B
// counted $0.34, its step spent $0.68, and with A's $0.70 the session
// spent $1.38.
func TestACriteriaWriterSpendingPastItsReservationIsCountedOnAnotherReplica(t *testing.T) {
	const budget, turn, writerTurn, writerSpend = 1.0, 0.02, 0.05, 0.70
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	entered, release := make(chan struct{}), make(chan struct{})
	writer := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Purpose != providers.PurposeCriteria {
			return coordtest.Answer("Answer: 391"), providers.Free(), nil
		}
		u, err := spendLikeACLI(req, writerTurn, writerSpend)
		if err != nil {
			return providers.Action{}, u, err
		}
		close(entered)
		<-release
		return coordtest.Act(threeCriteria), u, nil
	})
	a := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) { return writer, nil }})
	b := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return loopingCLIEvery(turn, 20*time.Millisecond), nil
	}})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(budget)}})
	if err != nil {
		t.Fatal(err)
	}
	criteriaDone := make(chan error, 1)
	go func() {
		_, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3})
		criteriaDone <- err
	}()
	<-entered
	// The hold rises beside the writer's reports, never in their way: B
	// looks until it reads A's spend held, or gives up.
	probe := pgTenant(t, dsn).(*pgstore.Store)
	var held float64
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		hs, err := probe.HoldSpend(ctx, s.ID, "probe", 0, 0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if held = hs.HeldCost; held >= writerSpend-1e-9 || time.Now().After(deadline) {
			break
		}
	}
	if err := probe.LetGoSpend(ctx, s.ID, "probe"); err != nil {
		t.Fatal(err)
	}
	_, stepErr := b.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.Agents[0].ID})
	stepCost, _ := sessionSpend(t, b, s.ID)
	close(release)
	criteriaErr := <-criteriaDone
	cost, _ := sessionSpend(t, b, s.ID)
	t.Logf("A's writer spent $%.2f; B read $%.4f held; B's step (%v) spent $%.2f; the session spent $%.2f of $%.2f (criteria: %v)", writerSpend, held, stepErr, stepCost, cost, budget, criteriaErr)
	if held < writerSpend-1e-9 {
		t.Errorf("another replica reads $%.4f held by A's criteria call, which has spent $%.2f; want at least its spend", held, writerSpend)
	}
	if limit := budget + 2*turn + 1e-9; cost > limit {
		t.Errorf("the session spent $%.2f, more than its budget plus two turns ($%.2f): B's step did not count A's spend past its reservation", cost, limit)
	}
}

// slowRaises is a PostgreSQL store whose writes of a criteria call's hold
// above its reservation (its raises) reach the database late, and whose
// let-go never does: a raise sent just before the call's spend is
// recorded then lands after the record.
type slowRaises struct {
	*pgstore.Store
	above float64
	late  time.Duration
}

func (s slowRaises) HoldSpend(ctx context.Context, id, key string, cost float64, tokens int64, ttl time.Duration) (coordination.HeldSpend, error) {
	if cost > s.above {
		time.Sleep(s.late)
	}
	return s.Store.HoldSpend(ctx, id, key, cost, tokens, ttl)
}

func (slowRaises) LetGoSpend(context.Context, string, string) error {
	return errors.New("the database did not answer")
}

// TestACriteriaWritersRaiseLandingAfterItsRecordLeavesNoHold: a criteria
// writer spends past its reservation (about $0.34) to $0.70, turn by turn,
// and returns at once; its last raise reaches the database after the
// call's spend is recorded, and the let-go after the record is lost. The
// record must be the hold's end: no replica may count the $0.70 held
// beside the $0.70 recorded. Before, the raise wrote the hold again after
// the record had taken it off, and every replica counted the call twice
// until the hold expired (step_timeout_seconds and a minute).
func TestACriteriaWritersRaiseLandingAfterItsRecordLeavesNoHold(t *testing.T) {
	const writerTurn, writerSpend = 0.05, 0.70
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	writer := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		u, err := spendLikeACLI(req, writerTurn, writerSpend)
		if err != nil {
			return providers.Action{}, u, err
		}
		return coordtest.Act(threeCriteria), u, nil
	})
	st := slowRaises{Store: pgTenant(t, dsn).(*pgstore.Store), above: 0.345, late: 300 * time.Millisecond}
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) { return writer, nil }})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(2.0)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Criteria(ctx, coordination.CriteriaRequest{SessionID: s.ID, Model: criteriaModel, Count: 3}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // any raise still on its way lands
	probe := pgTenant(t, dsn).(*pgstore.Store)
	hs, err := probe.HoldSpend(ctx, s.ID, "probe", 0, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after the call, another replica reads $%.4f spent and $%.4f held", hs.SpentCost, hs.HeldCost)
	if math.Abs(hs.SpentCost-writerSpend) > 1e-9 {
		t.Errorf("another replica reads $%.4f spent; want the call's $%.2f", hs.SpentCost, writerSpend)
	}
	if hs.HeldCost != 0 || hs.HeldTokens != 0 {
		t.Errorf("another replica reads $%.4f and %d tokens still held by the call whose spend is recorded; want none (a raise wrote the hold again after the record took it off)", hs.HeldCost, hs.HeldTokens)
	}
}

// spendLikeACLI reports a criteria writer's spend to req's Spend as a
// coding-agent CLI does, turn by turn at turn dollars, up to spend: the
// usage it reached, or a budget error once Spend stops it.
func spendLikeACLI(req providers.Request, turn, spend float64) (providers.Usage, error) {
	u := providers.Free()
	for *u.CostUSD < spend-1e-9 {
		c := *u.CostUSD + turn
		u = providers.Usage{Input: u.Input + 1000, Output: u.Output + 100, CostUSD: &c}
		if req.Spend != nil {
			if why := req.Spend.Used(u); why != "" {
				return u, &providers.Error{Class: providers.ClassBudget, Message: "stopped: it " + why}
			}
		}
	}
	return u, nil
}
