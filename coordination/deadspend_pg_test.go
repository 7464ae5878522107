package coordination_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// deadSpendSession is a service on a fresh PostgreSQL schema (a replica
// other than the one that created the session) and a session of two agents under budget (0: none) whose every step answers at once for
// answerCost, with agent_a's step lock row left as a replica that died
// mid-step leaves it: expired, held under deadKey, deadCost and 5,000
// tokens shared. calls counts the model calls.
func deadSpendSession(t *testing.T, driver string, budget, answerCost, deadCost float64) (svc *coordination.Service, s *coordination.Session, conn *pgx.Conn, calls *atomic.Int32) {
	t.Helper()
	return deadSpendSessionExpiring(t, driver, budget, answerCost, deadCost, -time.Second)
}

// deadSpendSessionExpiring is deadSpendSession with agent_a's row
// expiring in expires (past when negative).
func deadSpendSessionExpiring(t *testing.T, driver string, budget, answerCost, deadCost float64, expires time.Duration) (svc *coordination.Service, s *coordination.Session, conn *pgx.Conn, calls *atomic.Int32) {
	t.Helper()
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	calls = &atomic.Int32{}
	replica := func() *coordination.Service {
		return coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: answersAt(calls, answerCost)})
	}
	rules := budgeted(budget)
	// Created on one replica, whose step then dies; the session is taken
	// up on another (svc), which did not create it for a run of its own.
	s, err := replica().Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: driver, Rules: rules})
	svc = replica()
	if err != nil {
		t.Fatal(err)
	}
	conn = pgtest.Conn(t, dsn)
	if _, err := conn.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at, spent_cost, spent_tokens)
		VALUES ('acme', $1, 'step:agent_a', $2, now() + $4 * interval '1 millisecond', $3, 5000)`, s.ID, deadKey, deadCost, expires.Milliseconds()); err != nil {
		t.Fatal(err)
	}
	return svc, s, conn, calls
}

const deadKey = "dead-replica-lock-token"

// answersAt opens, for every agent, a model that answers at once for cost
// a step, counted in calls.
func answersAt(calls *atomic.Int32, cost float64) func(providers.Spec) (providers.Provider, error) {
	return func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
			calls.Add(1)
			c := cost
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
		}), nil
	}
}

// budgeted is rules with a cost budget of budget dollars (0: none).
func budgeted(budget float64) coordination.Rules {
	if budget <= 0 {
		return coordination.Rules{}
	}
	return coordination.Rules{CostBudgetUSD: &budget}
}

// deadSpendRecorded wants the session's ledger to hold the dead step's
// spend once, under its key, and no step lock row left to count it.
func deadSpendRecorded(t *testing.T, svc *coordination.Service, s *coordination.Session, conn *pgx.Conn, cost float64) {
	t.Helper()
	ctx := context.Background()
	got, tokens := spentUnder(t, svc, s.ID, deadKey)
	if math.Abs(got-cost) > 1e-9 || tokens != 5000 {
		t.Errorf("the ledger records $%.4f, %d tokens under the dead step's key; want $%.2f, 5,000 tokens", got, tokens, cost)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("step lock rows left: %d, %v; want none (the dead spend counted once, in the ledger)", rows, err)
	}
}

// deadSpendEnd is one way a session whose agent_a's step died with $0.37
// kept ends (TestASessionsEndRecordsTheSpendOfADeadStepWhoseAgentNeverStepsAgain
// and its file store twin): with answerCost a step and budget (0: none),
// the ended session costs want.
type deadSpendEnd struct {
	name       string
	answerCost float64
	budget     float64
	end        func(ctx context.Context, svc *coordination.Service, id string) (*coordination.TeamResult, error)
	want       float64
}

var deadSpendEnds = []deadSpendEnd{
	{"cancelled", 0.01, 10, func(ctx context.Context, svc *coordination.Service, id string) (*coordination.TeamResult, error) {
		return svc.Cancel(ctx, id)
	}, 0.37},
	{"finalized", 0.01, 10, func(ctx context.Context, svc *coordination.Service, id string) (*coordination.TeamResult, error) {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_b"}); err != nil {
			return nil, err
		}
		return svc.Finalize(ctx, id, coordination.FinalWinner)
	}, 0.38},
	{"stopped by its budget", 12, 10, func(ctx context.Context, svc *coordination.Service, id string) (*coordination.TeamResult, error) {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_b"}); err != nil {
			return nil, err
		}
		return svc.Result(ctx, id)
	}, 12.37},
	{"finalized, without a budget", 0.01, 0, func(ctx context.Context, svc *coordination.Service, id string) (*coordination.TeamResult, error) {
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_b"}); err != nil {
			return nil, err
		}
		return svc.Finalize(ctx, id, coordination.FinalWinner)
	}, 0.38},
}

// TestASessionsEndRecordsTheSpendOfADeadStepWhoseAgentNeverStepsAgain: a
// replica died mid-step of agent_a in a budgeted step-driven session, its
// $0.37 left on agent_a's step lock. agent_a never steps again, and the
// session ends: cancelled, finalized, or stopped by its budget at agent_b's
// landing; or, without a budget (its steps share their spend all the
// same), finalized. The end records the dead spend, so the result's cost
// counts it.
// Before, only agent_a's next step recorded it: the result lacked it and
// the row kept it for good.
func TestASessionsEndRecordsTheSpendOfADeadStepWhoseAgentNeverStepsAgain(t *testing.T) {
	for _, tc := range deadSpendEnds {
		t.Run(tc.name, func(t *testing.T) {
			svc, s, conn, _ := deadSpendSession(t, coordination.DriverStep, tc.budget, tc.answerCost, 0.37)
			res, err := tc.end(context.Background(), svc, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.CostUSD == nil || math.Abs(*res.CostUSD-tc.want) > 1e-9 {
				t.Errorf("the ended session's cost: $%.4f; want $%.2f (the dead step's $0.37 counted)", dollars(res.CostUSD), tc.want)
			}
			deadSpendRecorded(t, svc, s, conn, 0.37)
		})
	}
}

// TestARunCountsADeadStepsSpendBeforeItsFirstLaunch: a run-driven session
// under $1 whose agent_a's step died on another replica with $1.20 shared
// is run again. The run records that spend before its first launch, finds
// the budget spent and ends the session by it without calling a model.
// Before, the first launch checked a ledger without it and sent out a
// wave the budget could not pay for (the spend recorded only by agent_a's
// own step, once launched). The same when the run is taken up as the
// run's lease runs out, the step lock (renewed on a beat of its own) not
// yet run out: the run waits for it, a beat at most; before, the take
// found the row still held and the first wave went out.
func TestARunCountsADeadStepsSpendBeforeItsFirstLaunch(t *testing.T) {
	for name, expires := range map[string]time.Duration{"its lock run out": -time.Second, "its lock not yet run out": 2500 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			svc, s, conn, calls := deadSpendSessionExpiring(t, coordination.DriverRun, 1, 0.01, 1.20, expires)
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
			deadSpendRecorded(t, svc, s, conn, 1.20)
		})
	}
}

// diesAsDecided is the PostgreSQL store of a replica on which agent_a's
// step, $1.20 shared on its lock, dies as the session is decided: the row
// is left as a dead replica leaves it once the decided entry lands.
type diesAsDecided struct {
	*pgstore.Store
	conn *pgx.Conn
	once atomic.Bool
}

func (d *diesAsDecided) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := d.Store.AppendSession(ctx, id, e)
	return got, d.die(ctx, id, e, err)
}

func (d *diesAsDecided) AppendSessionLeased(ctx context.Context, id string, v int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := d.Store.AppendSessionLeased(ctx, id, v, e)
	return got, d.die(ctx, id, e, err)
}

func (d *diesAsDecided) AppendSessionSinceRead(ctx context.Context, id string, v int64, read coordination.LogRead, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	got, err := d.Store.AppendSessionSinceRead(ctx, id, v, read, e)
	return got, d.die(ctx, id, e, err)
}

func (d *diesAsDecided) die(ctx context.Context, id string, e coordination.SessionEntry, err error) error {
	if err != nil || e.Kind != coordination.SessionDecided || !d.once.CompareAndSwap(false, true) {
		return err
	}
	_, err = d.conn.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at, spent_cost, spent_tokens)
		VALUES ('acme', $1, 'step:agent_a', $2, now() - interval '1 second', 1.20, 5000)`, id, deadKey)
	return err
}

// TestAFinalizeOfADecidedSessionCountsADeadStepsSpend: a step-driven
// session under $1 is finalized with present; as it is decided, agent_a's
// step on a replica that died is left with $1.20 shared on its lock. The
// final call's budget check counts it: no final call, final_skipped, and
// the finished result's cost counts the $1.20. Before, the check read the
// ledger alone, the call was made, and the spend stayed on the lock.
func TestAFinalizeOfADecidedSessionCountsADeadStepsSpend(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	conn := pgtest.Conn(t, dsn)
	var calls atomic.Int32
	st := &diesAsDecided{Store: pgTenant(t, dsn).(*pgstore.Store), conn: conn}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: answersAt(&calls, 0.01)})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: budgeted(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Finalize(ctx, s.ID, coordination.FinalPresent)
	if err != nil {
		t.Fatal(err)
	}
	if !st.once.Load() {
		t.Fatal("the session was never decided")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d model calls; want agent_b's step alone, no final call past the budget", n)
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-1.21) > 1e-9 {
		t.Errorf("the finished session's cost: $%.4f; want $1.21 (the dead step's $1.20 counted)", dollars(res.CostUSD))
	}
	evs, err := svc.Events(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(e coordination.Event) bool { return e.Type == "final_skipped" }) {
		t.Errorf("no final_skipped on the timeline")
	}
	deadSpendRecorded(t, svc, s, conn, 1.20)
}

// TestAStepDrivenLandingCountsADeadStepsSpend: a step-driven session under
// $1 whose agent_a's step died on another replica with $0.90 shared. agent_b's
// step (its budget check counts the dead $0.90, so $0.10 is left) lands
// $0.20: the landing records the dead spend and ends the session by its
// budget, at $1.10. Before, the landing checked a ledger of $0.20 and the
// session read running until the next step was refused.
func TestAStepDrivenLandingCountsADeadStepsSpend(t *testing.T) {
	svc, s, conn, _ := deadSpendSession(t, coordination.DriverStep, 1, 0.20, 0.90)
	ctx := context.Background()
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Fatal(err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := v.Result
	if res.Status == coordination.StatusRunning || coordination.Deref(res.StopReason) != coordination.StopBudget {
		t.Fatalf("after the landing that spent the budget the session reads %s, stopped by %q; want it ended by the budget", res.Status, coordination.Deref(res.StopReason))
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-1.10) > 1e-9 {
		t.Errorf("the session's cost: $%.4f; want $1.10 (the dead step's $0.90 counted)", dollars(res.CostUSD))
	}
	deadSpendRecorded(t, svc, s, conn, 0.90)
}

// TestAStepDrivenLandingThatRecordsDeadSpendKeepsTheStepsInFlight: the
// landing that records a dead step's spend (under budget) derives the
// session again, and a step still in flight (agent_b's, its call pending)
// must stay in flight: not among next_agents, and no decision may take it
// for idle. The first version derived without the steps in flight.
func TestAStepDrivenLandingThatRecordsDeadSpendKeepsTheStepsInFlight(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	release, started := make(chan struct{}), make(chan struct{}, 1)
	var first atomic.Bool
	svc := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
			if first.CompareAndSwap(false, true) { // agent_b's call: pending until released
				started <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return providers.Action{}, providers.Usage{}, ctx.Err()
				}
			}
			c := 0.01
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
		}), nil
	}})
	budget := 10.0
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code", "gemini_cli"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	conn := pgtest.Conn(t, dsn)
	if _, err := conn.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at, spent_cost, spent_tokens)
		VALUES ('acme', $1, 'step:agent_a', $2, now() - interval '1 second', 0.37, 5000)`, s.ID, deadKey); err != nil {
		t.Fatal(err)
	}
	inFlight := make(chan error, 1)
	go func() {
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"})
		inFlight <- err
	}()
	<-started
	res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_c"})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-inFlight; err != nil {
		t.Fatalf("agent_b's step, in flight through agent_c's landing: %v", err)
	}
	if slices.Contains(res.NextAgents, "agent_b") {
		t.Errorf("agent_c's landing lists agent_b, whose step was in flight, among next_agents %v", res.NextAgents)
	}
	deadSpendRecorded(t, svc, s, conn, 0.37)
}

// TestAFinalCallSharesItsSpendOnTheWritersStepLock: a final call's spend so
// far is shared on its writer's step lock, as a step's is, where a replica
// that takes the session up after this one died finds it (TakeDeadSpend);
// once the finish lands, its usage is recorded under that key, once, and
// no lock row is left. Before, the call held no lock: a writer killed
// mid-call (a CLI's paid turns) left its spend nowhere, and the run that
// took the session up checked its budget without it. The same when the
// lock ran out while the call ran (the process stalled past its TTL): the
// finish takes the row's spend as dead, then records the call's usage,
// and the key counts it once (the first version recorded it twice).
func TestAFinalCallSharesItsSpendOnTheWritersStepLock(t *testing.T) {
	for _, ranOut := range []bool{false, true} {
		t.Run(map[bool]string{false: "held", true: "its lock ran out while the call ran"}[ranOut], func(t *testing.T) {
			finalCallShares(t, ranOut)
		})
	}
}

func finalCallShares(t *testing.T, ranOut bool) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	conn := pgtest.Conn(t, dsn)
	var calls atomic.Int32
	inCall, release := make(chan struct{}), make(chan struct{})
	svc := coordination.NewService(pgTenant(t, dsn), coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			c := 0.01
			if calls.Add(1) == 2 { // the final call: a CLI writer's turns, paid as they go
				paid := 0.60
				if req.Spend == nil {
					t.Error("the final call has no spend to report its turns to")
				} else {
					req.Spend.Used(providers.Usage{Input: 1000, CostUSD: &paid})
				}
				close(inCall)
				<-release
				c = paid
			}
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 1000, CostUSD: &c}, nil
		}), nil
	}})
	budget := 10.0
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: &budget}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var res *coordination.TeamResult
	go func() {
		var err error
		res, err = svc.Finalize(ctx, s.ID, coordination.FinalPresent)
		done <- err
	}()
	<-inCall
	var shared float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := conn.QueryRow(ctx, `SELECT coalesce(sum(spent_cost), 0)::float8 FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%' AND token <> ''`, s.ID).Scan(&shared)
		if err != nil {
			t.Fatal(err)
		}
		if shared > 0 || time.Now().After(deadline) {
			break
		}
	}
	if ranOut {
		if _, err := conn.Exec(ctx, `UPDATE locks SET expires_at = now() - interval '1 minute' WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if math.Abs(shared-0.60) > 1e-9 {
		t.Errorf("the final call's step lock carried $%.4f while it ran; want its $0.60 so far", shared)
	}
	if res.CostUSD == nil || math.Abs(*res.CostUSD-0.61) > 1e-9 {
		t.Errorf("the finished session's cost: $%.4f; want $0.61 (the step and the final call, once)", dollars(res.CostUSD))
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("step lock rows left after the finish: %d, %v; want none", rows, err)
	}
	l, err := svc.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(l.Session, func(e coordination.SessionEntry) bool {
		return e.Kind == coordination.SessionUsage && e.Spender != "" && e.Usage != nil && math.Abs(*e.Usage.CostUSD-0.60) < 1e-9
	}) {
		t.Errorf("the final call's usage is not recorded under its spend key")
	}
}

// lockStepGate is a PostgreSQL store whose second take of agent_a's step
// lock waits at the gate: a step that found the session running and
// reaches its lock only once a finalize has decided it.
type lockStepGate struct {
	*pgstore.Store
	takes   atomic.Int32
	entered chan struct{}
	gate    chan struct{}
}

func (g *lockStepGate) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	g.wait(agent)
	return g.Store.LockStep(ctx, id, agent)
}

// LockStepWithLease is the take a server step makes on this store, gated
// as LockStep.
func (g *lockStepGate) LockStepWithLease(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.StepLock, *coordination.RunLease, error) {
	g.wait(agent)
	return g.Store.LockStepWithLease(ctx, id, agent, owner, ttl)
}

// wait holds the second take of agent_a's lock at the gate.
func (g *lockStepGate) wait(agent string) {
	if agent == "agent_a" && g.takes.Add(1) == 2 {
		close(g.entered)
		<-g.gate
	}
}

// TestAStepRacingAFinalizeIsToldTheSessionEndedNotKeptWaiting: a step of
// the writer that found the session running reaches the agent's step lock
// after a finalize decided the session and its final call took the lock
// (finalLock): it is told the session has ended, at once, rather than
// waiting on the lock, as on another replica's step in flight, for the
// whole final call.
func TestAStepRacingAFinalizeIsToldTheSessionEndedNotKeptWaiting(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	var calls atomic.Int32
	inFinal, release := make(chan struct{}), make(chan struct{})
	st := &lockStepGate{Store: pgTenant(t, dsn).(*pgstore.Store), entered: make(chan struct{}), gate: make(chan struct{})}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if calls.Add(1) == 2 { // the final call
				close(inFinal)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			c := 0.01
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 100, CostUSD: &c}, nil
		}), nil
	}})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	stepped := make(chan error, 1)
	go func() {
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		stepped <- err
	}()
	<-st.entered
	finalized := make(chan error, 1)
	go func() {
		_, err := svc.Finalize(ctx, s.ID, coordination.FinalPresent)
		finalized <- err
	}()
	<-inFinal // decided, its final call holding agent_a's lock
	close(st.gate)
	select {
	case err = <-stepped:
	case <-time.After(3 * time.Second):
		t.Error("the step that raced the finalize is still waiting on the final call's lock")
		close(release)
		err = <-stepped
	}
	if !errors.Is(err, coordination.ErrSessionFinished) {
		t.Errorf("the step that raced the finalize: %v; want the session's end (ErrSessionFinished)", err)
	}
	select {
	case <-release:
	default:
		close(release)
	}
	if err := <-finalized; err != nil {
		t.Fatal(err)
	}
}
