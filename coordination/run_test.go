package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestLastTwoStepsLandingTogetherStillDecide pins the lost-wakeup rule: each
// step decides after releasing its step lock, so when two final votes land
// at once, one of them sees the other and finishes the session.
func TestLastTwoStepsLandingTogetherStillDecide(t *testing.T) {
	for i := 0; i < 50; i++ {
		var gate sync.WaitGroup
		gate.Add(2)
		together := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if len(req.VoteEnum) == 0 {
				return coordtest.Answer("answer of " + req.AgentID), providers.Free(), nil
			}
			gate.Done()
			gate.Wait() // both votes are computed before either lands
			return coordtest.Vote(req.VoteEnum[0]), providers.Free(), nil
		})
		models, _, provs := coordtest.Team(t, 2)
		provs[models[0]], provs[models[1]] = together, together
		h := coordtest.New(t, provs)
		ctx := context.Background()
		s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
		for _, id := range []string{"agent_a", "agent_b"} {
			if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for _, id := range []string{"agent_a", "agent_b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		l := h.Ledger(s.ID)
		finished := false
		for _, e := range l.Session {
			finished = finished || e.Kind == coordination.SessionFinished
		}
		if !finished {
			t.Fatalf("iteration %d: both votes landed but nobody decided", i)
		}
	}
}

// slowProvider answers after a delay, honouring cancellation.
func slowProvider(d time.Duration, inner providers.Provider) providers.Provider {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return providers.Action{}, providers.Usage{}, ctx.Err()
		}
		return inner.Step(ctx, req)
	})
}

func TestInterruptedRunResumesWithNoEntryLostOrDuplicated(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 3)
	// Round 1 is held in flight until the cancel (honouring it), and the
	// cancel waits (bounded) for round 0 to land: a cancel at a fixed 45 ms
	// could come, on a loaded machine, before round 0 had landed or after
	// round 1 had. The count below still fails if a cancelled step writes.
	var hold atomic.Bool
	hold.Store(true)
	for i, m := range models {
		slow := slowProvider(30*time.Millisecond, sc[i])
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if req.StepNumber > 1 && hold.Load() {
				<-ctx.Done()
				return providers.Action{}, providers.Usage{}, ctx.Err()
			}
			return slow.Step(ctx, req)
		})
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	for i := range sc {
		sc[i].Replies = []any{coordtest.Answer(fmt.Sprintf("draft %d", i)), coordtest.Answer(fmt.Sprintf("better %d", i))}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		coordination.Eventually(10*time.Second, func() bool { // round 0 landed, round 1 in flight
			l, err := h.Service.Store().Ledger(context.Background(), s.ID)
			n := 0
			if err == nil {
				for _, es := range l.Agents {
					n += len(es)
				}
			}
			return n >= 3
		})
		cancel()
	}()
	res, err := h.Service.Run(ctx, s.ID, nil)
	hold.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusCancelled {
		t.Fatalf("an interrupted run is cancelled, got %s", res.Status)
	}
	before := h.Ledger(s.ID)
	steps := 0
	for _, es := range before.Agents {
		steps += len(es)
	}
	if steps != 3 {
		t.Fatalf("round 0 landed and the cancelled steps wrote nothing: %d entries", steps)
	}
	res = h.Run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("resumed run: %s", coordtest.JSON(res))
	}
	after := h.Ledger(s.ID)
	for id, es := range after.Agents {
		for i, e := range es {
			if e.Step != i+1 {
				t.Fatalf("%s: entry %d has step %d (lost or duplicated)", id, i, e.Step)
			}
		}
		if es[0].Content != before.Agents[id][0].Content {
			t.Fatalf("%s: round 0 changed", id)
		}
	}
	kinds := []coordination.SessionEntryKind{}
	for _, e := range after.Session {
		kinds = append(kinds, e.Kind)
	}
	if fmt.Sprint(kinds) != "[cancelled resumed finished]" {
		t.Fatalf("session entries %v", kinds)
	}
}

// startedSlowTeam starts a two-agent team whose models answer in an hour.
func startedSlowTeam(t *testing.T) (*coordtest.Harness, *coordination.Session, *coordination.Run) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	for i, m := range models {
		provs[m] = slowProvider(time.Hour, sc[i])
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	r, _, err := h.Service.Start(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return h, s, r
}

func TestCancelTeamStopsALocalRun(t *testing.T) {
	h, s, r := startedSlowTeam(t)
	if again, _, _ := h.Service.Start(context.Background(), s.ID); again != r {
		t.Fatal("a second start returns the running handle")
	}
	res, err := h.Service.Cancel(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusCancelled || res.CancelReason != "cancelled by request" {
		t.Fatalf("status %s, cancel reason %q", res.Status, res.CancelReason)
	}
	<-r.Done()
}

// TestARunOnlyJoinedGoesOnWhenItsWaiterStops: Run on a session another
// caller of the service started only waits for it; its caller leaving
// cancels nothing.
func TestARunOnlyJoinedGoesOnWhenItsWaiterStops(t *testing.T) {
	h, s, r := startedSlowTeam(t)
	ctx, stop := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, stop)
	if res, err := h.Service.Run(ctx, s.ID, nil); err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "goes on running") {
		t.Fatalf("a joined run's waiter left: %v, %v", res, err)
	}
	select {
	case <-r.Done():
		t.Fatal("the run was cancelled by a caller that only joined it")
	case <-time.After(100 * time.Millisecond):
	}
	if st, err := h.Service.Status(context.Background(), s.ID); err != nil || st.Result.Status != coordination.StatusRunning {
		t.Fatalf("status %+v, %v: want running", st.Result, err)
	}
	if _, err := h.Service.Cancel(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
}

func TestRunTimeoutForcesAnEnd(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	provs[models[1]] = slowProvider(time.Hour, sc[1])
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{TimeoutSeconds: 0.1}})
	sc[0].Replies = []any{coordtest.Answer("fast")}
	res := h.Run(s.ID)
	if *res.StopReason != coordination.StopTimeout || res.Winner.AgentID != "agent_a" || *res.HowChosen != coordination.ChosenForcedFirst {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
}

func TestTokenBudgetEndsTheSession(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	// Each step uses half a round's worst case, so a budget of 1.4 rounds
	// pays for the first round (its worst case fits) and not for a third
	// step (spent plus the mean step is 1.5 rounds).
	var round int64
	for _, m := range models {
		inner := provs[m]
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			a, u, err := inner.Step(ctx, req)
			u.Input, u.Output = round/2-50, 50
			return a, u, err
		})
	}
	h := coordtest.New(t, provs)
	spec := coordination.TeamSpec{Task: "t", Agents: []coordination.Agent{{Model: models[0], MaxOutputTokens: 50}, {Model: models[1], MaxOutputTokens: 50}},
		Rules: coordination.Rules{MaxAnswersPerAgent: 5}}
	est, err := h.Service.Estimate(spec)
	if err != nil {
		t.Fatal(err)
	}
	round = est.RoundTokens
	budget := round * 14 / 10
	spec.Rules.TokenBudget = &budget
	s := h.Create(spec)
	for i := range sc {
		sc[i].Replies = []any{coordtest.Answer(fmt.Sprint(i)), coordtest.Answer(fmt.Sprint(i, "b")), coordtest.Answer(fmt.Sprint(i, "c"))}
	}
	res := h.Run(s.ID)
	if *res.StopReason != coordination.StopBudget || res.Steps != 2 || !res.BudgetEnforced {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
}

// TestABudgetThatCannotPayForOneRoundIsRefusedBeforeAnySpend: the worst
// case of every agent's first step, at list prices, is checked when the
// team is created; nothing is written and no model is called.
func TestABudgetThatCannotPayForOneRoundIsRefusedBeforeAnySpend(t *testing.T) {
	calls := 0
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		calls++
		return coordtest.Act(providers.NewAnswerCall("x")), providers.Free(), nil
	})
	m := "sim:price_in=10:price_out=40"
	h := coordtest.New(t, map[string]providers.Provider{m: p})
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{m, m, m}}
	est, err := h.Service.Estimate(spec)
	if err != nil {
		t.Fatal(err)
	}
	// 8,192 output tokens assumed at $40/M, three agents: about $0.98.
	if len(est.Agents) != 3 || est.RoundCostUSD < 0.98 || est.RoundCostUSD > 1.0 || !est.Agents[0].OutputAssumed || est.Problem != "" {
		t.Fatalf("estimate: %s", coordtest.JSON(est))
	}
	if est.SessionCostUSD <= est.RoundCostUSD {
		t.Fatalf("the session's worst case must exceed one round's: %s", coordtest.JSON(est))
	}
	budget := 0.05
	spec.Rules.CostBudgetUSD = &budget
	_, err = h.Service.Create(context.Background(), spec)
	if !errors.Is(err, coordination.ErrBudgetTooSmall) || !errors.Is(err, coordination.ErrBadInput) ||
		!strings.Contains(err.Error(), "a cost budget of $0.0500 cannot pay for one round of these 3 agents: about $0.9") {
		t.Fatalf("want the budget refused with the estimate, got %v", err)
	}
	if ids, _ := h.Store.Sessions(context.Background()); len(ids) != 0 || calls != 0 {
		n := len(ids)
		t.Fatalf("a refused team wrote %d sessions and made %d calls", n, calls)
	}
	// With a cap on each reply the same budget pays for a round.
	for range 3 {
		spec.Agents = append(spec.Agents, coordination.Agent{Model: m, MaxOutputTokens: 300})
	}
	spec.Models = nil
	if _, err := h.Service.Create(context.Background(), spec); err != nil {
		t.Fatalf("with max_output_tokens 300 the round fits $0.05: %v", err)
	}
}

func TestUnknownCostMeansBudgetNotEnforced(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		a, _, err := sc[0].Step(ctx, req)
		return a, providers.Usage{Input: 1}, err // cost unknown
	})
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	res := h.Run(s.ID)
	if res.BudgetEnforced || res.CostUSD != nil {
		t.Fatalf("cost must be null and the budget unenforced: %s", coordtest.JSON(res))
	}
}

func TestFinalStrategies(t *testing.T) {
	for _, final := range []coordination.FinalStrategy{coordination.FinalPresent, coordination.FinalSynthesize} {
		t.Run(string(final), func(t *testing.T) {
			models, sc, provs := coordtest.Team(t, 2)
			h := coordtest.New(t, provs)
			s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Final: final}})
			a := coordtest.Alias(s, "agent_a")
			sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a), coordtest.Answer("FINAL: 4")}
			sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
			res := h.Run(s.ID)
			if *res.FinalAnswer != "FINAL: 4" || res.Status != coordination.StatusFinished {
				t.Fatalf("got %s", coordtest.JSON(res))
			}
			req := sc[0].Requests()[2]
			want := providers.PurposePresent
			if final == coordination.FinalSynthesize {
				want = providers.PurposeSynthesize
			}
			if req.Purpose != want || len(req.Shown) != 2 {
				t.Fatalf("final request purpose %s shown %d", req.Purpose, len(req.Shown))
			}
		})
	}
}

func TestStepDrivenPresentWaitsForFinalize(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{Final: coordination.FinalPresent}})
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a), coordtest.Answer("presented 4")}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	var last *coordination.StepResult
	for _, id := range []string{"agent_a", "agent_b", "agent_a", "agent_b"} {
		var err error
		if last, err = h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if last.Finished || last.Result == nil || last.Result.Status != coordination.StatusDecided {
		t.Fatalf("present leaves the session decided: %+v", last)
	}
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if *res.FinalAnswer != "presented 4" || res.Status != coordination.StatusFinished {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
}

func TestFinalizeForcesAnEndNow(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	sc[0].Replies = []any{coordtest.Answer("1")}
	sc[1].Replies = []any{coordtest.Answer("2")}
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Service.Finalize(ctx, s.ID, "best"); !errors.Is(err, coordination.ErrBadSettings) || !strings.Contains(err.Error(), `final "best" is not one of winner, present, synthesize`) {
		t.Fatalf("an unknown final strategy = %v, want ErrBadSettings naming the strategies", err)
	}
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if *res.StopReason != coordination.StopFinalized || *res.HowChosen != coordination.ChosenForcedFirst || res.Winner.AgentID != "agent_a" {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
	// Asked again (its answer lost, or sent to another replica): the same
	// result, not a refusal.
	again, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil || again.Winner == nil || again.Winner.AgentID != res.Winner.AgentID || *again.StopReason != coordination.StopFinalized {
		t.Fatalf("finalizing twice = %v, %s; want the first's result", err, coordtest.JSON(again))
	}
}

func TestSessionTimerEndsAStepDrivenSessionPastItsTimeout(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	h.Service = coordination.NewService(h.Store, coordination.Options{Open: h.Open, Now: func() time.Time { return clock() }})
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep, Rules: coordination.Rules{TimeoutSeconds: 60}})
	sc[0].Replies = []any{coordtest.Answer("4")}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if res, _ := h.Service.Result(ctx, s.ID); res.Status != coordination.StatusRunning {
		t.Fatalf("within its timeout the session runs on: %s", res.Status)
	}
	now = now.Add(61 * time.Second)
	if err := h.Service.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	l := h.Ledger(s.ID)
	if len(l.Session) == 0 || l.Session[len(l.Session)-1].Kind != coordination.SessionFinished {
		t.Fatalf("the timer must finish it: %+v", l.Session)
	}
	res := l.Session[len(l.Session)-1].Result
	if *res.StopReason != coordination.StopTimeout || res.Winner.AgentID != "agent_a" {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
}

// TestRunProgressCountsVotesAsTheyLanded: a run's steps leave the tally to
// whoever listens, and a listener still gets it right: each vote's line
// counts the votes for its target that had landed by then, so votes for one
// target say 1, 2, 3 of 3 — never "2" for the first.
func TestRunProgressCountsVotesAsTheyLanded(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 3)
	for _, sc := range scripts {
		sc.Replies = []any{coordtest.Answer("Answer: 4")}
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	var mu sync.Mutex
	var votes, answers []coordination.Progress
	if _, err := h.Service.Run(context.Background(), s.ID, func(p coordination.Progress) {
		mu.Lock()
		defer mu.Unlock()
		switch p.Kind {
		case "vote":
			votes = append(votes, p)
		case "answer":
			answers = append(answers, p)
		}
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(votes) == 0 {
		t.Fatal("no vote progress")
	}
	line := regexp.MustCompile(`^(agent_[a-c]) \(sim:seed=10[0-2]\) voted for (agent_[a-c]) \[(agent[1-3]\.1)\] — ([1-3]) of 3 votes for \[(agent[1-3]\.1)\]$`)
	counts := map[string][]int{}
	for _, p := range votes {
		m := line.FindStringSubmatch(p.Message)
		if m == nil || m[3] != m[5] || p.Live != 3 {
			t.Fatalf("a vote's progress: %+v", p)
		}
		n, _ := strconv.Atoi(m[4])
		counts[m[3]] = append(counts[m[3]], n)
	}
	for label, ns := range counts {
		slices.Sort(ns)
		for i, n := range ns {
			if n != i+1 {
				t.Errorf("votes for %s counted %v; want 1..%d", label, ns, len(ns))
			}
		}
	}
	for _, p := range answers {
		if !regexp.MustCompile(`^agent_[a-c] \(sim:seed=10[0-2]\) answered \[agent[1-3]\.1\]$`).MatchString(p.Message) {
			t.Errorf("an answer's progress: %q", p.Message)
		}
	}
}
