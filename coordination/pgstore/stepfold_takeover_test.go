package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAStepNotDueLeavesAnAbandonedLeaseAsItFoundIt: an agent whose last
// try on this replica was given up with its lease unreleased (its release
// lost in an outage: the row, known here, reads abandoned) and whose step
// is then refused as not due leaves that lease as it found it, as
// AcquireStep after the due check left it before the claim rode the lock:
// a claim with the lock would carry the try's run of claims on, and its
// release as not due would end that run, the dead try read released (no
// more an interrupted step) and its time and tool calls forgotten.
func TestAStepNotDueLeavesAnAbandonedLeaseAsItFoundIt(t *testing.T) {
	a, svc, s := answeredStepSession(t)
	ctx := context.Background()
	const agent = "agent_a"
	all, err := a.ReadSteps(ctx, s.ID)
	if err != nil || all[agent] == nil {
		t.Fatalf("the lease after a step: %v, %v", all, err)
	}
	// The service's own next try, given up with its lease left to run out.
	try, err := a.AcquireStep(ctx, s.ID, agent, all[agent].LeaseOwner, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RenewStep(ctx, s.ID, agent, try.Version, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("a step before the peer's = %v; want ErrNotNext", err)
	}
	all, err = a.ReadSteps(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l := all[agent]; l == nil || l.Version != try.Version || l.Released || !l.Abandoned(time.Now()) {
		t.Errorf("after a step refused as not due the lease is %+v; want version %d left abandoned", l, try.Version)
	}
}
