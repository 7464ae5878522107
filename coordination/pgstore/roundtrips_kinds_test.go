package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAGroupsBatchCountsUnderItsMembersKind: the overhead bench's "round
// trips by kind" counts a group of landings, or of step lock takes, under
// the kind of round trip each member sends alone, not as a kind of its own
// for each size and mix of group (which split the landings over a dozen
// rows, each too rare to show). Groups are made here as the leaders make
// them (commitGroup, sendTakes), beside lone ones.
func TestAGroupsBatchCountsUnderItsMembersKind(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	const n = 4
	locks := make([]*stepLock, n)
	for i := range n {
		id := fmt.Sprint("s", i)
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		l, err := a.LockStep(ctx, id, "agent_a") // a take alone
		if err != nil {
			t.Fatal(err)
		}
		locks[i] = l.(*stepLock)
	}
	// A group of three takes, of agent_b's locks.
	takes := make([]*stepTake, 0, n-1)
	for i := 1; i < n; i++ {
		takes = append(takes, &stepTake{s: a, ctx: ctx, id: fmt.Sprint("s", i), agent: "agent_b", token: a.db.lockToken()})
	}
	if err := a.db.sendTakes(ctx, takes, true); err != nil {
		t.Fatal(err)
	}
	// A landing alone, then a group of three.
	if _, err := locks[0].Append(ctx, newAnswer("agent_a", "alone")); err != nil {
		t.Fatal(err)
	}
	group := make([]*stepLanding, 0, n-1)
	for _, l := range locks[1:] {
		e := newAnswer(l.agent, "grouped")
		e.Step, e.Time = l.step, ms(time.Now())
		group = append(group, &stepLanding{ctx: ctx, s: a, l: l, e: e})
	}
	if err := a.db.commitGroup(group); err != nil {
		t.Fatal(err)
	}

	kinds := func(sql string) (all []QueryCount) {
		for _, q := range c.Top(1000, 1000) {
			if strings.HasPrefix(q.Kind, "[") && strings.Contains(q.Kind, sql) {
				all = append(all, q)
			}
		}
		return all
	}
	for _, k := range []struct {
		what, sql string
		want      int64
	}{
		{"step lock takes", strings.Join(strings.Fields(stepNumbering), " "), n + 1},
		{"landings", "massgen_hold_step(", 2},
	} {
		got := kinds(k.sql)
		counts := make([]int64, len(got))
		for i, q := range got {
			counts[i] = q.Count
		}
		if len(got) != 1 || got[0].Count != k.want {
			t.Errorf("the %s, alone and grouped, were counted as %d kinds of %v round trips; want one kind of %d", k.what, len(got), counts, k.want)
		}
	}
}
