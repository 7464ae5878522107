package coordination_test

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// TestARunsTimeoutBindsAcrossAHandOver: a run handed over (a rolling
// restart) or taken over from a dead replica has only the time its
// timeout left; it does not start the timeout again. Two services on one
// store are two replicas.
func TestARunsTimeoutBindsAcrossAHandOver(t *testing.T) {
	st := memstore.New()
	a, startedA := blockedService(st, coordination.Options{HandOver: true})
	b, _ := blockedService(st, coordination.Options{})
	ctx := context.Background()
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"},
		Rules: coordination.Rules{TimeoutSeconds: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	<-startedA
	time.Sleep(2 * time.Second)
	if err := a.Shutdown(ctx); err != nil { // hands the run over
		t.Fatal(err)
	}
	if resumed, err := b.ResumeInterrupted(ctx, nil); err != nil || len(resumed) != 1 {
		t.Fatalf("B resuming: %v, %v", resumed, err)
	}
	t0 := time.Now()
	res, err := b.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	if res.StopReason == nil || *res.StopReason != coordination.StopTimeout {
		t.Fatalf("B's run ended %s, want a timeout: %+v", res.Status, res)
	}
	// A ran ~2 s of the 3: B has ~1 s, not 3.
	if took > 2*time.Second {
		t.Errorf("B ran %s more of a 3 s timeout that A had used 2 s of: the timeout started again", took.Round(time.Millisecond))
	}
}
