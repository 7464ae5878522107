package coordination_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func simService(parallel int) (*coordination.Service, *memstore.Store) {
	st := memstore.New()
	return coordination.NewService(st, coordination.Options{Open: backends.Open, Parallel: parallel}), st
}

func runSim(t testing.TB, svc *coordination.Service, spec coordination.TeamSpec) (*coordination.Session, *coordination.TeamResult) {
	s, err := svc.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(context.Background(), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

var simTasks = []string{
	"What is 17 * 23?",
	"What is the capital of Australia?",
	"Compute (12 + 7) * 3",
	"Write a haiku about the Go gopher",
	"Propose a name for a coffee shop",
}

// TestSimTeamsAlwaysFinish is the property of docs/DESIGN.md, "Protocol rules": every session
// ends within agents × max_rounds steps, with a winner that has an answer.
func TestSimTeamsAlwaysFinish(t *testing.T) {
	profiles := []string{"sim", "sim/strong", "sim/weak", "sim/weak:conformity=0.9", "sim:revise=0.6", "sim:self_bias=0.5"}
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(rt, "agents")
		var models []string
		for i := 0; i < n; i++ {
			models = append(models, rapid.SampledFrom(profiles).Draw(rt, "model"))
		}
		rules := coordination.Rules{
			Consensus:          rapid.SampledFrom([]coordination.ConsensusRule{"majority", "plurality", "unanimous"}).Draw(rt, "consensus"),
			MaxRounds:          rapid.IntRange(1, 6).Draw(rt, "max_rounds"),
			MaxAnswersPerAgent: rapid.IntRange(1, 4).Draw(rt, "max_answers"),
		}
		if rapid.Bool().Draw(rt, "short") {
			rules.AnswerFormat = coordination.FormatShort
			rules.EarlyStop = rapid.Bool().Draw(rt, "early")
		}
		if rapid.Bool().Draw(rt, "alphabetical") {
			rules.Aliases, rules.RotateOwnLast, rules.BlindFirst = coordination.AliasesAlphabetical, new(bool), new(bool)
		}
		seed := rapid.Int64Range(-coordination.MaxSeed, coordination.MaxSeed).Draw(rt, "seed")
		task := rapid.SampledFrom(simTasks).Draw(rt, "task")
		svc, _ := simService(rapid.IntRange(1, 8).Draw(rt, "parallel"))
		_, res := runSim(t, svc, coordination.TeamSpec{Task: task, Models: models, Rules: rules, Seed: &seed})
		if res.Status != coordination.StatusFinished {
			rt.Fatalf("status %s (%s)", res.Status, *res.StopReason)
		}
		if res.Steps > n*rules.MaxRounds {
			rt.Fatalf("%d steps > %d agents × %d rounds", res.Steps, n, rules.MaxRounds)
		}
		found := false
		for _, a := range res.Answers {
			found = found || (a.AgentID == res.Winner.AgentID && a.Label == res.Winner.Label)
		}
		if !found || res.FinalAnswer == nil || *res.FinalAnswer == "" {
			rt.Fatalf("winner %+v has no answer among %+v", res.Winner, res.Answers)
		}
	})
}

// ledgerText renders a ledger without times, for comparing runs.
func ledgerText(l *coordination.Ledger, s *coordination.Session) string {
	var b strings.Builder
	for _, id := range s.AgentIDs() {
		for _, e := range l.Agents[id] {
			fmt.Fprintf(&b, "%s %d %s %q %s %s %v %s\n", id, e.Step, e.Kind, e.Content, e.Label, e.TargetLabel, e.SeenSteps, e.Class)
		}
	}
	for _, e := range l.Session {
		fmt.Fprintf(&b, "session %s %v\n", e.Kind, e.Agents)
	}
	return b.String()
}

func TestParallelOneSameSeedSameLedger(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		var texts []string
		for i := 0; i < 2; i++ {
			svc, st := simService(1)
			s, _ := runSim(t, svc, coordination.TeamSpec{Task: simTasks[seed%int64(len(simTasks))], Models: []string{"sim", "sim/weak", "sim/strong", "sim"}, Seed: &seed})
			l, err := st.Ledger(context.Background(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, ledgerText(l, s))
		}
		if texts[0] != texts[1] {
			t.Fatalf("seed %d: ledgers differ:\n%s\n---\n%s", seed, texts[0], texts[1])
		}
	}
}

func TestThreeAgreeingSimsReachConsensusWithoutASplit(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		svc, st := simService(8)
		s, res := runSim(t, svc, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/accuracy=1:revise=0", "sim/accuracy=1:revise=0", "sim/accuracy=1:revise=0"}, Seed: &seed})
		if *res.HowChosen != coordination.ChosenConsensus || *res.FinalAnswer == "" || !strings.Contains(*res.FinalAnswer, "391") {
			t.Fatalf("seed %d: %s", seed, coordtest.JSON(res))
		}
		l, _ := st.Ledger(context.Background(), s.ID)
		for _, e := range l.Session {
			if e.Kind == coordination.SessionRevote {
				t.Fatalf("seed %d: agreeing sims split", seed)
			}
		}
	}
}

func TestNoAgentStepsTwiceBeforeRoundZeroCompletes(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		svc, st := simService(8)
		s, _ := runSim(t, svc, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim:latency=1ms", "sim:latency=5ms", "sim:latency=3ms", "sim"}, Seed: &seed})
		l, _ := st.Ledger(context.Background(), s.ID)
		var lastFirst, firstSecond int64
		firstSecond = 1 << 62
		for _, es := range l.Agents {
			lastFirst = max(lastFirst, es[0].Time.UnixNano())
			if len(es) > 1 {
				// A second step starts only after every first answer has
				// landed, so it must see every first answer.
				for id, n := range es[1].SeenSteps {
					if n < 1 {
						t.Fatalf("seed %d: a second step did not see %s's first answer: %v", seed, id, es[1].SeenSteps)
					}
				}
				firstSecond = min(firstSecond, es[1].Time.UnixNano())
			}
		}
		if firstSecond < lastFirst {
			t.Fatalf("seed %d: a second step landed before round 0 completed", seed)
		}
	}
}

// TestSimsExerciseTheWholeProtocol checks that across seeds, sim teams
// produce revisions that stale votes, answer caps, splits and re-votes.
func TestSimsExerciseTheWholeProtocol(t *testing.T) {
	seen := map[string]int{}
	for seed := int64(1); seed <= 60; seed++ {
		svc, st := simService(4)
		task := simTasks[seed%int64(len(simTasks))]
		s, res := runSim(t, svc, coordination.TeamSpec{Task: task, Models: []string{"sim", "sim/weak", "sim:revise=0.4", "sim/weak:self_bias=0.4"}, Seed: &seed,
			Rules: coordination.Rules{MaxAnswersPerAgent: 2, MaxRounds: 6}})
		l, _ := st.Ledger(context.Background(), s.ID)
		latest := coordination.LatestAnswerSteps(l)
		for id, es := range l.Agents {
			answers := 0
			for _, e := range es {
				switch e.Kind {
				case coordination.KindAnswer:
					answers++
					if e.AnswerNum > 1 {
						seen["revision"]++
					}
				case coordination.KindVote:
					if coordination.IsVoteStale(&e, latest) {
						seen["stale vote"]++
					}
				}
			}
			if answers >= 2 {
				seen["answer cap"]++
			}
			_ = id
		}
		for _, e := range l.Session {
			if e.Kind == coordination.SessionRevote {
				seen["re-vote"]++
			}
		}
		if strings.HasPrefix(*res.HowChosen, "forced") {
			seen["forced"]++
		}
		if *res.HowChosen == coordination.ChosenConsensus {
			seen["consensus"]++
		}
	}
	for _, k := range []string{"revision", "stale vote", "answer cap", "re-vote", "forced", "consensus"} {
		if seen[k] == 0 {
			t.Errorf("no %s in 60 seeded sim runs: %v", k, seen)
		}
	}
	t.Logf("across 60 runs: %v", seen)
}

func TestCostBudgetEndsTheSession(t *testing.T) {
	svc, _ := simService(1)
	seed := int64(3)
	m := "sim:price_in=10:price_out=40:revise=0.9" // revisions keep the team busy
	var agents []coordination.Agent
	for range 3 {
		agents = append(agents, coordination.Agent{Model: m, MaxOutputTokens: 200})
	}
	spec := coordination.TeamSpec{Task: "Write a haiku about the Go gopher", Agents: agents, Seed: &seed,
		Rules: coordination.Rules{MaxRounds: 10, MaxAnswersPerAgent: 10}}
	est, err := svc.Estimate(spec)
	if err != nil {
		t.Fatal(err)
	}
	// One round's worst case fits; the session's, ten rounds, does not.
	budget := est.RoundCostUSD * 1.2
	spec.Rules.CostBudgetUSD = &budget
	_, res := runSim(t, svc, spec)
	if *res.StopReason != coordination.StopBudget || !res.BudgetEnforced || res.CostUSD == nil {
		t.Fatalf("got %s", coordtest.JSON(res))
	}
	// One step at a time, each launched only while the spend plus the mean
	// step fits: a sim's steps cost about the mean, so with this seed the
	// spend stays within the budget.
	if *res.CostUSD > budget || res.Steps < 3 {
		t.Fatalf("stopped at $%g after %d steps against the $%g budget", *res.CostUSD, res.Steps, budget)
	}
}

// TestRunReportsEveryStepEvenWhenItIsOverAtOnce: a progress callback given
// to Run sees every step and the end, however fast the models are: it is
// subscribed before the loop starts, and steps that landed just before the
// end are reported before it.
func TestRunReportsEveryStepEvenWhenItIsOverAtOnce(t *testing.T) {
	svc, _ := simService(0)
	for seed := int64(1); seed <= 40; seed++ {
		s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: simTasks[0], Models: []string{"sim/strong", "sim/strong", "sim"}, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		started, landed, finished := 0, 0, 0
		res, err := svc.Run(context.Background(), s.ID, func(p coordination.Progress) {
			switch p.Kind {
			case "step_started":
				started++
			case "answer", "vote", "error":
				landed++
			case "finished":
				finished++
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		// A step launched just as another step ends the session is refused
		// before it calls its model, so more may start than land.
		if started < res.Steps || landed != res.Steps || finished != 1 {
			t.Fatalf("seed %d: %d steps, but %d started, %d landed and %d finished messages", seed, res.Steps, started, landed, finished)
		}
	}
}

// TestCancelAllRightAfterStartLeavesTheSessionCancelled: a run cancelled
// before its loop has looked at the session (a server shut down right after
// run_team returned) still records the cancellation, so the session says
// cancelled and resumable rather than running.
func TestCancelAllRightAfterStartLeavesTheSessionCancelled(t *testing.T) {
	svc, _ := simService(0)
	ctx := context.Background()
	for i := range 50 {
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: simTasks[0], Models: []string{"sim:latency=10s", "sim:latency=10s"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Start(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		svc.CancelAll()
		res, err := svc.Result(ctx, s.ID)
		if err != nil || res.Status != coordination.StatusCancelled {
			t.Fatalf("run %d: after CancelAll the session is %v (%v), want cancelled", i, res.Status, err)
		}
	}
}

// TestLentLedgerThatNeedsCompletingIsCopiedNotWritten: an entry written
// without a label (as MassGen writes them) gets its label in what the
// service shows, while the memory store's lent ledger, shared with every
// reader, stays as stored.
func TestLentLedgerThatNeedsCompletingIsCopiedNotWritten(t *testing.T) {
	svc, st := simService(0)
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: simTasks[0], Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.LockStep(ctx, s.ID, "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "391", SeenSteps: map[string]int{"agent_a": 0}}); err != nil {
		t.Fatal(err)
	}
	lock.Release()
	res, err := svc.Result(ctx, s.ID)
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Label == "" {
		t.Fatalf("the service shows %+v (%v), want the answer with its label", res, err)
	}
	loan, err := st.LendLedger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := loan.Agents["agent_a"][0].Label; got != "" {
		t.Errorf("the store's own entry was written to: label %q", got)
	}
}
