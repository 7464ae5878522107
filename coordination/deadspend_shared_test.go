package coordination_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// The dead-spend checks the file store's and PostgreSQL's tests share.

// spentUnder is the cost and tokens the session's ledger records under
// key (a dead step's spend, by its lock's key).
func spentUnder(t *testing.T, svc *coordination.Service, id, key string) (cost float64, tokens int64) {
	t.Helper()
	l, err := svc.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Session {
		if e.Spender == key && e.Usage != nil {
			cost += *e.Usage.CostUSD
			tokens += e.Usage.Tokens()
		}
	}
	return cost, tokens
}

// threeTurnsRecordedOnce wants the ledger to hold a killed step's three
// turns ($turns, 3,300 tokens) as one usage entry under its key, saying
// why, and the session's cost to be those and its next step's ($next).
func threeTurnsRecordedOnce(t *testing.T, svc *coordination.Service, id string, turns, next float64) {
	t.Helper()
	ctx := context.Background()
	l, err := svc.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var dead []coordination.SessionEntry
	for _, e := range l.Session {
		if e.Kind == coordination.SessionUsage {
			dead = append(dead, e)
		}
	}
	if len(dead) != 1 || dead[0].Spender == "" || dead[0].Usage == nil || dead[0].Usage.CostUSD == nil ||
		math.Abs(*dead[0].Usage.CostUSD-turns) > 1e-9 || dead[0].Usage.Tokens() != 3300 || !strings.Contains(dead[0].Reason, "stopped answering") {
		t.Fatalf("the ledger's record of the killed step's spend: %s; want one usage entry of $%.2f and 3,300 tokens under its key, saying why", coordtest.JSON(dead), turns)
	}
	res, err := svc.Result(ctx, id)
	if err != nil || res.CostUSD == nil || math.Abs(*res.CostUSD-(turns+next)) > 1e-9 {
		t.Errorf("the session's cost: %s, %v; want $%.2f (the killed step's and the next one's)", coordtest.JSON(res), err, turns+next)
	}
}
