package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestADeadHoldersSpendIsTakenWithoutAStepOfItsAgent: replica B dies with
// $0.30 shared on agent_b's step lock while agent_c's step, live, shares
// $0.10. TakeDeadSpend, asked of another replica with no step of agent_b,
// gives up B's spend under B's key and leaves agent_c's alone; the spend
// goes on being counted until its record lands, and B's late landing is
// refused (its spend is being recorded: landed as well, it would count
// twice). It is given up again until recorded; the record takes it off and
// the row goes. Before, only agent_b's next step took it, and an agent
// never stepped again left it on the row for good.
func TestADeadHoldersSpendIsTakenWithoutAStepOfItsAgent(t *testing.T) {
	c := newDeadSpendCase(t)
	ctx := context.Background()
	lb := c.take(c.b, "agent_b")
	c.share(lb, 0.30, 3000)
	c.dies(c.b, lb)
	lc := c.take(c.b, "agent_c")
	defer lc.Release()
	c.share(lc, 0.10, 100)
	want := coordination.DeadSpend{Agent: "agent_b", InheritedSpend: coordination.InheritedSpend{Key: lb.token, CostUSD: 0.30, Tokens: 3000}}
	for i := range 2 {
		dead, err := c.a.TakeDeadSpend(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 1 || dead[0] != want {
			t.Fatalf("TakeDeadSpend (%d) gave %+v; want B's $0.30, 3,000 tokens under its key, and nothing of agent_c's live step", i+1, dead)
		}
		c.counts(0.40, 3100, "with B's spend given up, not yet recorded")
	}
	cost := 0.35
	if _, err := lb.Append(ctx, coordination.Entry{Agent: "agent_b", Kind: coordination.KindAnswer, Content: "4",
		Usage: providers.Usage{Input: 3000, Output: 500, CostUSD: &cost}}); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("B's late landing: %v; want it refused as a lock taken over (ErrLeaseLost)", err)
	}
	if _, err := lc.AppendAndRelease(ctx, coordination.Entry{Agent: "agent_c", Kind: coordination.KindAnswer, Content: "4"}); err != nil {
		t.Fatalf("agent_c's live step could not land: %v", err)
	}
	c.record(0.30, 3000, lb.token)
	c.counts(0.30, 3000, "once B's spend was recorded (agent_c's step landed free)")
	if dead, err := c.a.TakeDeadSpend(ctx, "s"); err != nil || len(dead) != 0 {
		t.Errorf("TakeDeadSpend after the record: %+v, %v; want none", dead, err)
	}
	if n := c.stepRows(); n != 1 {
		t.Errorf("%d step lock rows after the record; want agent_a's alone", n)
	}
}
