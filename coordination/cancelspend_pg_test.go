package coordination_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// gatedSessionLock is a store whose session lock, once armed, waits at the
// gate: it holds a cancelled call's usage record (taken under that lock)
// for the test to look at what the other replicas count meanwhile. The
// store's other interfaces (step locks that share spend, leases) are the
// embedded store's.
type gatedSessionLock struct {
	coordination.Store
	armed   atomic.Bool
	reached chan struct{}
	gate    chan struct{}
}

func (g *gatedSessionLock) LockSession(ctx context.Context, id string) (func(), error) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.reached)
		<-g.gate
	}
	return g.Store.LockSession(ctx, id)
}

// TestACancelledCallsSpendIsCountedWhileItIsRecorded: a budgeted CLI step
// on one replica is cancelled mid-call. Its spend so far is on its step
// lock's row, which every replica's budget check counts, until the usage
// entry that records it is written. The row now goes only after that
// record: counted at worst twice for a moment, never not. Before, the row
// went first, and for as long as the record took (longer if it waited for
// the store) the other replicas' budget checks counted nothing of it.
func TestACancelledCallsSpendIsCountedWhileItIsRecorded(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn)
	gated := &gatedSessionLock{Store: st, reached: make(chan struct{}), gate: make(chan struct{})}
	svc := coordination.NewService(gated, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return loopingCLIEvery(0.02, 20*time.Millisecond), nil
	}})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(100.0)}})
	if err != nil {
		t.Fatal(err)
	}
	conn := pgtest.Conn(t, dsn)
	// What a budget check on any replica counts of the session: its usage
	// rows and every step lock row's spend (pgstore/sharedspend.go).
	counted := func() float64 {
		var inFlight, recorded float64
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(spent_cost), 0) FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID).Scan(&inFlight); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(coalesce(cost_usd, 0)), 0) FROM usage WHERE tenant = 'acme' AND session_id = $1`, s.ID).Scan(&recorded); err != nil {
			t.Fatal(err)
		}
		return inFlight + recorded
	}
	sctx, cancel := context.WithCancel(ctx)
	stepped := make(chan error, 1)
	go func() {
		_, err := svc.Step(sctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.Agents[0].ID})
		stepped <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); counted() < 0.1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the step shared no spend within 20 s")
		}
	}
	gated.armed.Store(true)
	cancel()
	select {
	case <-gated.reached:
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call's usage was never recorded")
	}
	if got := counted(); got < 0.1 {
		t.Errorf("while the cancelled call's spend was being recorded the replicas counted $%.2f of it; want what it had shared (at least $0.10)", got)
	}
	close(gated.gate)
	if err := <-stepped; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled step: %v", err)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("step lock rows after the cancelled step: %d, %v; want none", rows, err)
	}
	res, err := svc.Result(ctx, s.ID)
	if err != nil || res.CostUSD == nil || *res.CostUSD < 0.1 || counted() != *res.CostUSD {
		t.Errorf("after the record: result %+v, %v, counted $%.2f; want the cancelled call's spend counted once", res, err, counted())
	}
}

// TestADeadReplicasSpendInFlightIsRecordedByTheStepThatTakesItOver: a
// replica died mid-step of a budgeted session, its step lock's row left
// with the $0.37 and 5,000 tokens it had shared. The agent's next step, on
// another replica, takes the row over and records that spend in the
// ledger, under the dead step's key: it was paid. Before, the take reset
// the row and the spend vanished from the session's cost and budget.
func TestADeadReplicasSpendInFlightIsRecordedByTheStepThatTakesItOver(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn)
	svc, s := budgetedAnsweringPair(t, st)
	agent := s.Agents[0].ID
	conn := pgtest.Conn(t, dsn)
	const deadKey = "dead-replica-lock-token"
	deadStepLock(t, conn, s.ID, agent, deadKey)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.37 + turn; res.CostUSD == nil || math.Abs(*res.CostUSD-want) > 1e-9 {
		t.Errorf("the session's cost after its step took over a dead replica's: %+v; want $%.2f (the dead step's shared spend and the new step's)", res, want)
	}
	l, err := st.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var dead []coordination.SessionEntry
	for _, e := range l.Session {
		if e.Spender == deadKey {
			dead = append(dead, e)
		}
	}
	if len(dead) != 1 || dead[0].Usage == nil || dead[0].Usage.Tokens() != 5000 || !strings.Contains(dead[0].Reason, "stopped answering") {
		t.Errorf("the ledger's record of the dead step's spend: %+v; want one usage entry of 5,000 tokens under its key, saying why", dead)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("step lock rows after the step landed: %d, %v; want none (the dead spend counted once, in the ledger)", rows, err)
	}

	// The replica was only cut off, not dead: once it reaches the store it
	// records its stopped call's whole spend ($0.50, 6,000 tokens) under
	// the same key. Only what the takeover's record lacked is added, once
	// however often the record is tried; a smaller record adds nothing.
	late := func(cost float64, in, out int64, retried bool) {
		t.Helper()
		if err := coordination.RecordLateSpend(svc, ctx, s.ID, agent, providers.Usage{Input: in, Output: out, CostUSD: &cost}, deadKey, retried); err != nil {
			t.Fatal(err)
		}
	}
	late(0.50, 5500, 500, false)
	late(0.50, 5500, 500, true)
	late(0.30, 3000, 100, false)
	l, err = st.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var deadCost float64
	var deadTokens int64
	for _, e := range l.Session {
		if e.Spender == deadKey {
			deadCost += *e.Usage.CostUSD
			deadTokens += e.Usage.Tokens()
		}
	}
	if math.Abs(deadCost-0.50) > 1e-9 || deadTokens != 6000 {
		t.Errorf("the dead step's spend recorded by its takeover and then by itself (twice, and a smaller record): $%.4f, %d tokens; want its own $0.50, 6,000 tokens once", deadCost, deadTokens)
	}
	if res, err = svc.Result(ctx, s.ID); err != nil || res.CostUSD == nil || math.Abs(*res.CostUSD-(0.50+turn)) > 1e-9 {
		t.Errorf("the session's cost: %+v, %v; want $%.2f", res, err, 0.50+turn)
	}
}

// TestADeadReplicasSpendIsRecordedThoughTheStepThatFoundItIsRefused: the
// step that takes a dead replica's step lock over is refused (its agent is
// not due: it answered and waits for the others) and lets the lock go at
// once. The spend the take found and reset is recorded all the same: the
// record is made as the lock is taken, before anything that may let it go.
func TestADeadReplicasSpendIsRecordedThoughTheStepThatFoundItIsRefused(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn)
	svc, s := budgetedAnsweringPair(t, st)
	agent := s.Agents[0].ID
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatal(err)
	}
	conn := pgtest.Conn(t, dsn)
	deadStepLock(t, conn, s.ID, agent, "dead-replica-lock-token")
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("a second step of an agent that answered and waits: %v; want it refused as not due", err)
	}
	res, err := svc.Result(ctx, s.ID)
	if want := 0.37 + turn; err != nil || res.CostUSD == nil || math.Abs(*res.CostUSD-want) > 1e-9 {
		t.Errorf("the session's cost after a refused step found a dead replica's spend: %+v, %v; want $%.2f", res, err, want)
	}
}

// deadStepLock leaves agent's step lock row as a replica that died mid-step
// leaves it: expired, held under key, with $0.37 and 5,000 tokens shared.
func deadStepLock(t *testing.T, conn *pgx.Conn, id, agent, key string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), `INSERT INTO locks (tenant, session_id, name, token, expires_at, spent_cost, spent_tokens)
		VALUES ('acme', $1, $2, $3, now() - interval '1 second', 0.37, 5000)`, id, "step:"+agent, key); err != nil {
		t.Fatal(err)
	}
}

// turn is what each answer of budgetedAnsweringPair's agents costs.
const turn = 0.01

// budgetedAnsweringPair is a service on st and a step-driven session of two
// agents under a $10 budget whose every step answers at once for turn.
func budgetedAnsweringPair(t *testing.T, st coordination.Store) (*coordination.Service, *coordination.Session) {
	t.Helper()
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
		return providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
			c := turn
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
		}), nil
	}})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"codex", "claude_code"},
		Driver: coordination.DriverStep, Rules: coordination.Rules{CostBudgetUSD: new(10.0)}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

// gatedSpendRecord is a store whose usage records under a spend key wait
// at the gate (SessionEntry.Spender: a taken-over step's record among
// them), for the test to look at what the other replicas count meanwhile.
type gatedSpendRecord struct {
	coordination.Store
	reached chan struct{}
	gate    chan struct{}
}

func (g *gatedSpendRecord) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if e.Spender != "" {
		close(g.reached)
		<-g.gate
	}
	return g.Store.AppendSession(ctx, id, e)
}

// TestADeadReplicasSpendIsCountedWhileItsRecordWaits: the step that took
// a dead replica's step lock over records the $0.37 it found; while that
// record waits (a slow store), another replica's budget check still counts
// it, and once it lands counts it once. Before, the take reset the row and
// the spend counted nowhere until the record.
func TestADeadReplicasSpendIsCountedWhileItsRecordWaits(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn)
	gated := &gatedSpendRecord{Store: st, reached: make(chan struct{}), gate: make(chan struct{})}
	svc, s := budgetedAnsweringPair(t, gated)
	agent, other := s.Agents[0].ID, s.Agents[1].ID
	conn := pgtest.Conn(t, dsn)
	deadStepLock(t, conn, s.ID, agent, "dead-replica-lock-token")
	// Another replica's budget check: a step of the other agent, sharing
	// nothing yet.
	replica := pgTenant(t, dsn)
	lock, err := replica.LockStep(ctx, s.ID, other)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	counted := func() float64 {
		t.Helper()
		cost, _, err := lock.(coordination.SpendSharingStepLock).ShareSpend(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return cost
	}
	stepped := make(chan error, 1)
	go func() {
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
		stepped <- err
	}()
	select {
	case <-gated.reached:
	case <-time.After(20 * time.Second):
		t.Fatal("the dead replica's spend was never recorded")
	}
	if got := counted(); math.Abs(got-0.37) > 1e-9 {
		t.Errorf("while the dead replica's spend was being recorded another replica counted $%.2f; want its $0.37", got)
	}
	close(gated.gate)
	if err := <-stepped; err != nil {
		t.Fatal(err)
	}
	if got := counted(); math.Abs(got-(0.37+turn)) > 1e-9 {
		t.Errorf("once recorded, another replica counts $%.4f; want $%.2f (the dead spend once, and the step's)", got, 0.37+turn)
	}
}
