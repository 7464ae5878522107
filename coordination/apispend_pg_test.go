package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"syscall"
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

// apiLoopTurn is what each turn of loopAPIStep's agent costs.
const apiLoopTurn = 0.25

// loopAPIStep is a replica process (TestMain) that steps agent of session
// id on the database dsn, tenant acme: an API agent whose tool loop asks
// for a tool every turn at apiLoopTurn, and holds its fourth turn until the
// process is killed, saying "holding" first.
func loopAPIStep(dsn, id, agent string) int {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, dsn, pgstore.Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	st, err := db.For("acme")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	hold := func(_ context.Context, turn int) {
		if turn == 4 {
			fmt.Println("holding")
			<-make(chan struct{})
		}
	}
	// A short step lease, so the test need not wait out the default's 10 s
	// once the process is gone.
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 500 * time.Millisecond,
		Open: func(providers.Spec) (providers.Provider, error) { return loopingAPI(apiLoopTurn, 200, hold), nil }})
	_, err = svc.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: agent})
	fmt.Println("stepped:", err)
	return 1
}

// TestADeadReplicasAPIStepSpendIsRecordedByTheStepThatTakesItOver: a
// replica runs an API agent's step of a session without a budget; its
// tool loop makes three turns of $0.25, each asking for a tool, and the
// replica is killed (SIGKILL) in the fourth. The loop reported its spend
// after each of the three, and the store shares it on the step lock's row,
// so the agent's next step, on another replica, takes the row over and
// records the dead step's $0.75 in the ledger. Before, an API agent's loop
// never reported, and a session without a budget shared nothing: the row
// held $0, and the $0.75 paid was in no ledger.
func TestADeadReplicasAPIStepSpendIsRecordedByTheStepThatTakesItOver(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn)
	const next = 0.01 // the next step's answer
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(providers.Spec) (providers.Provider, error) {
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

	replica := startHolding(t, "the replica", "MASSGEN_TEST_API_LOOP_DSN="+dsn, "MASSGEN_TEST_API_LOOP_SESSION="+s.ID, "MASSGEN_TEST_API_LOOP_AGENT="+agent)

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	row := "step:" + agent
	var shared float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := conn.QueryRow(ctx, `SELECT spent_cost FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name = $2`, s.ID, row).Scan(&shared); err != nil {
			t.Fatal(err)
		}
		if math.Abs(shared-3*apiLoopTurn) < 1e-9 || time.Now().After(deadline) {
			break
		}
	}
	if math.Abs(shared-3*apiLoopTurn) > 1e-9 {
		t.Fatalf("the step lock's row holds $%.2f of the loop's spend; want its three turns' $%.2f", shared, 3*apiLoopTurn)
	}
	_ = replica.Process.Signal(syscall.SIGKILL)
	_ = replica.Wait()
	// The row's expiry brought forward, as its 10 s TTL would bring it.
	if _, err := conn.Exec(ctx, `UPDATE locks SET expires_at = now() - interval '1 second' WHERE tenant = 'acme' AND session_id = $1 AND name = $2`, s.ID, row); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
		if err == nil {
			break
		}
		if !errors.Is(err, coordination.ErrAgentBusy) || time.Now().After(deadline) {
			t.Fatalf("the agent's next step: %v", err)
		}
	}
	threeTurnsRecordedOnce(t, svc, s.ID, 3*apiLoopTurn, next)
}

// TestOnlyAStepThatLoopsSharesItsSpend: in a session without a budget on
// a store that shares spend, a step whose model answers in one call (as
// the overhead benchmark's sim agents do) sends no share of its spend, so
// a step costs the round trips it did; an API agent's step whose loop
// makes three turns that ask for tools sends at most one share after each
// (fewer when they come faster than the database answers: only the newest
// is written).
func TestOnlyAStepThatLoopsSharesItsSpend(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	trips := &pgstore.QueryCounts{}
	db, err := pgstore.Open(ctx, dsn, pgstore.Options{Tracer: trips})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := db.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: func(sp providers.Spec) (providers.Provider, error) {
		if sp.Model == "loops" {
			// Turns as slow as the database, at least: a share still
			// under way when its step lands is not sent.
			return loopingAPI(0.05, 4, func(context.Context, int) { time.Sleep(50 * time.Millisecond) }), nil
		}
		return providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
			c := 0.01
			return coordtest.Answer("Answer: 391"), providers.Usage{Input: 100, Output: 10, CostUSD: &c}, nil
		}), nil
	}})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"openai/once", "openai/loops"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	shares := func() (n int64) {
		for _, q := range trips.Top(1000, 40) {
			if strings.HasPrefix(q.Kind, "WITH spendmine") {
				n += q.Count
			}
		}
		return n
	}
	for i, want := range []struct {
		most int64
		what string
	}{{0, "a step of one model call"}, {3, "a step whose loop made three turns that asked for tools"}} {
		before, sharedBefore := trips.Count(), shares()
		if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.Agents[i].ID}); err != nil {
			t.Fatal(err)
		}
		n := shares() - sharedBefore
		t.Logf("%s: %d round trips, %d of them shares of its spend", want.what, trips.Count()-before, n)
		if n > want.most || (want.most > 0 && n == 0) {
			t.Errorf("%s shared its spend %d times; want %s", want.what, n, map[bool]string{true: "never", false: "once to three times"}[want.most == 0])
		}
	}
}
