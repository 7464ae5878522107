package coordination_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// The file store's versions of deadspend_pg_test.go: serve killed mid-step
// (SIGKILL, the OOM killer) leaves its step's spend beside the step lock
// the kernel let go, and the run taken up again, the session's end or the
// agent's next step records it.

// keepFileSpend is a process (TestMain) that takes agent_a's step lock of
// session id in the file store at dir, keeps cost and 5,000 tokens as its
// step's spend so far, says "shared <key>" and waits to be killed.
func keepFileSpend(dir, id, cost string) int {
	c, err := strconv.ParseFloat(cost, 64)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx := context.Background()
	l, err := filestore.New(dir).LockStep(ctx, id, "agent_a")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	sl := l.(coordination.SpendSharingStepLock)
	if _, _, err := sl.ShareSpend(ctx, c, 5000); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("shared", sl.SpendKey())
	time.Sleep(time.Minute)
	return 1
}

// killedFileStep runs keepFileSpend for session id over dir and kills it
// once it has kept its spend; it returns the key the spend was kept under.
func killedFileStep(t *testing.T, dir, id string, cost float64) string {
	t.Helper()
	p := exec.Command(os.Args[0], "-test.run", "^$")
	p.Env = append(os.Environ(), "MASSGEN_TEST_FILE_SPEND_DIR="+dir, "MASSGEN_TEST_FILE_SPEND_SESSION="+id, "MASSGEN_TEST_FILE_SPEND_COST="+strconv.FormatFloat(cost, 'f', -1, 64))
	out, err := p.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.Stderr = io.Discard
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = p.Process.Signal(syscall.SIGKILL)
	_ = p.Wait()
	key, ok := strings.CutPrefix(strings.TrimSpace(line), "shared ")
	if err != nil || !ok {
		t.Fatalf("the killed process said %q, %v; want it to keep its step's spend", line, err)
	}
	return key
}

// fileDeadSpendSession is deadSpendSession on a file store: a service
// (another than the one that created the session) over a fresh state
// directory and a session of two agents under budget (0: none) whose
// every step answers at once for answerCost, with agent_a's step killed
// mid-call in another process, deadCost and 5,000 tokens kept. It
// returns the state directory and the dead step's key too.
func fileDeadSpendSession(t *testing.T, driver string, budget, answerCost, deadCost float64) (svc *coordination.Service, s *coordination.Session, dir, key string, calls *atomic.Int32) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	calls = &atomic.Int32{}
	service := func() *coordination.Service {
		return coordination.NewService(filestore.New(dir), coordination.Options{Logger: zerolog.Nop(), Open: answersAt(calls, answerCost)})
	}
	s, err := service().Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: driver, Rules: budgeted(budget)})
	if err != nil {
		t.Fatal(err)
	}
	key = killedFileStep(t, dir, s.ID, deadCost)
	return service(), s, dir, key, calls
}

// fileDeadSpendRecorded wants the session's ledger to hold the dead step's
// spend once, under its key, and no spend file left to count it.
func fileDeadSpendRecorded(t *testing.T, svc *coordination.Service, s *coordination.Session, dir, key string, cost float64) {
	t.Helper()
	got, tokens := spentUnder(t, svc, s.ID, key)
	if math.Abs(got-cost) > 1e-9 || tokens != 5000 {
		t.Errorf("the ledger records $%.4f, %d tokens under the dead step's key; want $%.2f, 5,000 tokens", got, tokens, cost)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "sessions", s.ID, "agents", "*", ".*-*.json"))
	if len(left) != 0 {
		t.Errorf("spend files left: %v; want none (the dead spend counted once, in the ledger)", left)
	}
}

// TestARunCountsADeadStepsSpendBeforeItsFirstLaunchOnTheFileStore: a
// run-driven session under $1 whose agent_a's step was killed mid-call in
// another process, $1.20 kept, is run again. The run records that spend
// before its first launch, finds the budget spent and ends the session by
// it without calling a model. Before, the file store kept no step's spend:
// the run launched against a ledger without the $1.20, and the budget did
// not bind.
func TestARunCountsADeadStepsSpendBeforeItsFirstLaunchOnTheFileStore(t *testing.T) {
	svc, s, dir, key, calls := fileDeadSpendSession(t, coordination.DriverRun, 1, 0.01, 1.20)
	res, err := svc.Run(context.Background(), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 || coordination.Deref(res.StopReason) != coordination.StopBudget {
		t.Errorf("the run made %d model calls and stopped by %q; want none, stopped by the budget the dead step spent", n, coordination.Deref(res.StopReason))
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-1.20) > 1e-9 {
		t.Errorf("the run's cost: $%.4f; want the dead step's $1.20", dollars(res.CostUSD))
	}
	fileDeadSpendRecorded(t, svc, s, dir, key, 1.20)
}

// TestASessionsEndRecordsTheSpendOfADeadStepWhoseAgentNeverStepsAgainOnTheFileStore:
// a process was killed mid-step of agent_a in a step-driven session, its
// $0.37 kept beside the step lock. agent_a never steps again, and the
// session ends: cancelled, finalized, or stopped by its budget at agent_b's
// landing; or, without a budget (its steps keep their spend all the same),
// finalized. The end records the dead spend, so the result's cost counts
// it. Before, the file store kept nothing, and the result lacked it.
func TestASessionsEndRecordsTheSpendOfADeadStepWhoseAgentNeverStepsAgainOnTheFileStore(t *testing.T) {
	for _, tc := range deadSpendEnds {
		t.Run(tc.name, func(t *testing.T) {
			svc, s, dir, key, _ := fileDeadSpendSession(t, coordination.DriverStep, tc.budget, tc.answerCost, 0.37)
			res, err := tc.end(context.Background(), svc, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.CostUSD == nil || math.Abs(*res.CostUSD-tc.want) > 1e-9 {
				t.Errorf("the ended session's cost: $%.4f; want $%.2f (the dead step's $0.37 counted)", dollars(res.CostUSD), tc.want)
			}
			fileDeadSpendRecorded(t, svc, s, dir, key, 0.37)
		})
	}
}

// fileLoopTurn is what each turn of loopFileRun's agent costs.
const fileLoopTurn = 0.25

// loopFileRun is a serve process (TestMain) that runs session id on the
// file store at dir, or steps its agent when one is named: an API agent
// whose tool loop asks for a tool every turn at fileLoopTurn and holds its
// fourth turn until the process is killed, saying "holding" first.
func loopFileRun(dir, id, agent string) int {
	hold := func(_ context.Context, turn int) {
		if turn == 4 {
			fmt.Println("holding")
			<-make(chan struct{})
		}
	}
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return loopingAPI(fileLoopTurn, 200, hold), nil }})
	var err error
	if agent != "" {
		_, err = svc.Step(context.Background(), coordination.StepRequest{SessionID: id, AgentID: agent})
	} else {
		_, err = svc.Run(context.Background(), id, nil)
	}
	fmt.Println("ran:", err)
	return 1
}

// killedMidLoop runs loopFileRun for session id over dir (stepping agent,
// or running the session when agent is "") and kills it (SIGKILL) once its
// step has kept its three turns' spend beside its step lock.
func killedMidLoop(t *testing.T, dir, id, agent, keptBy string) {
	t.Helper()
	serve := startHolding(t, "serve", "MASSGEN_TEST_FILE_LOOP_DIR="+dir, "MASSGEN_TEST_FILE_LOOP_SESSION="+id, "MASSGEN_TEST_FILE_LOOP_AGENT="+agent)
	// The third turn's share is written beside the turns, a fifth of a
	// second at most after the one before.
	kept := func() float64 {
		files, _ := filepath.Glob(filepath.Join(dir, "sessions", id, "agents", keptBy, ".spent-*.json"))
		var f struct {
			CostUSD float64 `json:"cost_usd"`
		}
		if len(files) == 1 {
			if data, err := os.ReadFile(files[0]); err == nil && json.Unmarshal(data, &f) == nil {
				return f.CostUSD
			}
		}
		return 0
	}
	for deadline := time.Now().Add(10 * time.Second); math.Abs(kept()-3*fileLoopTurn) > 1e-9 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := kept(); math.Abs(got-3*fileLoopTurn) > 1e-9 {
		t.Fatalf("the step's spend file holds $%.2f; want its three turns' $%.2f", got, 3*fileLoopTurn)
	}
	_ = serve.Process.Signal(syscall.SIGKILL)
	_ = serve.Wait()
}

// TestARunResumedAfterServeWasKilledMidStepCountsTheStepsSpend: a run of
// one API agent under $1 is killed (SIGKILL) in its step's fourth turn,
// the first three ($0.75) paid and kept beside the step lock. The run
// taken up again records them before its first launch, so its step stops
// at the budget after one turn: $1.00 in all, $0.75 of it the killed
// step's. Before, the resumed run's ledger had none of the $0.75, its step
// looped four more turns, and the session paid $1.75 of its $1 while its
// result said $1.00.
func TestARunResumedAfterServeWasKilledMidStepCountsTheStepsSpend(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	ctx := context.Background()
	var turns atomic.Int32
	service := func() *coordination.Service {
		return coordination.NewService(filestore.New(dir), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
			return loopingAPI(fileLoopTurn, 200, func(context.Context, int) { turns.Add(1) }), nil
		}})
	}
	budget := 1.0
	// Created by another service than the one that takes the run up, as
	// serve's restart is.
	svc := service()
	s, err := service().Create(ctx, coordination.TeamSpec{
		Task: "What is 17 * 23?", Agents: []coordination.Agent{{ID: "a", Model: "openai/gpt-5-mini"}}, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	killedMidLoop(t, dir, s.ID, "", "a")

	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := turns.Load(); n != 1 || coordination.Deref(res.StopReason) != coordination.StopBudget {
		t.Errorf("the resumed run made %d turns and stopped by %q; want one, stopped by the budget", n, coordination.Deref(res.StopReason))
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-(3*fileLoopTurn+fileLoopTurn)) > 1e-9 {
		t.Errorf("the session's cost: $%.4f; want $1.00, the killed step's $0.75 and the resumed one's turn", dollars(res.CostUSD))
	}
	l, err := svc.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var dead float64
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage && e.Spender != "" && e.Usage != nil && e.Usage.CostUSD != nil {
			dead += *e.Usage.CostUSD
		}
	}
	if math.Abs(dead-3*fileLoopTurn) > 1e-9 {
		t.Errorf("the ledger records $%.2f of the killed step's spend; want $%.2f: %s", dead, 3*fileLoopTurn, coordtest.JSON(l.Session))
	}
}

// TestAKilledStepsSpendIsRecordedByTheAgentsNextStepWithoutABudgetOnTheFileStore:
// serve steps an API agent of a session without a budget; its tool loop
// makes three turns of $0.25, each asking for a tool, and serve is killed
// (SIGKILL) in the fourth. A step's spend is kept beside its lock with a
// budget or without, so the agent's next step, in another process, takes
// the file over and records the killed step's $0.75: the session's cost
// stays true. Before, the file store kept nothing, and the $0.75 paid was
// in no ledger.
func TestAKilledStepsSpendIsRecordedByTheAgentsNextStepWithoutABudgetOnTheFileStore(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	ctx := context.Background()
	const next = 0.01 // the next step's answer
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
			c := next
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
		}), nil
	}})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"openai/a", "openai/b"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	agent := s.Agents[0].ID
	killedMidLoop(t, dir, s.ID, agent, agent)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatalf("the agent's next step: %v", err)
	}
	threeTurnsRecordedOnce(t, svc, s.ID, 3*fileLoopTurn, next)
	if left, _ := filepath.Glob(filepath.Join(dir, "sessions", s.ID, "agents", "*", ".*-*.json")); len(left) != 0 {
		t.Errorf("spend files left: %v; want none", left)
	}
}
