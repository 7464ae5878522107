package coordination_test

import (
	"context"
	"math"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestASpendFoundRecordedComesOffTheLockRows: a replica cut off mid-step
// recorded its step's whole spend ($0.37, 5,000 tokens) under its key, and
// then a share it had sent late landed on its lock's row, which it never
// renewed again. The agent's next step takes the row over and its record of
// what it found adds nothing (the key's spend is in the ledger already), but
// it must still take the key off the row: before, nothing was written, so
// nothing took it off, and every budget check counted the spend twice for
// good, the row kept holderless after the step let it go.
func TestASpendFoundRecordedComesOffTheLockRows(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn)
	svc, s := budgetedAnsweringPair(t, st)
	agent := s.Agents[0].ID
	const deadKey = "cut-off-replica-lock-token"
	cost := 0.37
	if err := coordination.RecordLateSpend(svc, ctx, s.ID, agent, providers.Usage{Input: 5000, CostUSD: &cost}, deadKey, false); err != nil {
		t.Fatal(err)
	}
	conn := pgtest.Conn(t, dsn)
	deadStepLock(t, conn, s.ID, agent, deadKey)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatal(err)
	}
	var recorded float64
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM locks WHERE tenant = 'acme' AND session_id = $1 AND name LIKE 'step:%'`, s.ID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(coalesce(cost_usd, 0)), 0) FROM usage WHERE tenant = 'acme' AND session_id = $1`, s.ID).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d step lock rows after the step landed; want none (the key's spend is in the ledger, not on a row)", rows)
	}
	res, err := svc.Result(ctx, s.ID)
	if want := 0.37 + turn; err != nil || res.CostUSD == nil || math.Abs(*res.CostUSD-want) > 1e-9 || math.Abs(recorded-want) > 1e-9 {
		t.Errorf("the session's cost: %+v, %v, the ledger's $%.2f; want $%.2f, the cut-off step's spend once", res, err, recorded, want)
	}
	// What any replica's budget check counts: the ledger and the rows.
	var checked float64
	lock, err := st.LockStep(ctx, s.ID, s.Agents[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if checked, _, err = lock.(coordination.SpendSharingStepLock).ShareSpend(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	if want := 0.37 + turn; math.Abs(checked-want) > 1e-9 {
		t.Errorf("a budget check counts $%.2f; want $%.2f (the key's spend once)", checked, want)
	}
}
