package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAFoldedClaimReadsBackAsSent: the claim a take with its lease sends
// reads back with the time it was claimed as the store keeps it
// (asStored), which a failed take names: the service takes such a claim
// back only when version and claim time both match what ReadSteps reads,
// so a claim that read back otherwise would never be taken back.
func TestAFoldedClaimReadsBackAsSent(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the insert, then the known row's update
		l, lease, err := a.LockStepWithLease(ctx, "s", "agent_a", coordination.ThisProcess("test"), time.Minute)
		if err != nil || lease == nil {
			t.Fatalf("take %d: %+v, %v", i, lease, err)
		}
		got := stepLease(t, a)
		if sent := asStored(*lease); got == nil || got.Version != sent.Version || !got.Claimed.Equal(sent.Claimed) {
			t.Errorf("take %d: the claim reads back %+v; sent %+v", i, got, sent)
		}
		if err := a.ReleaseStep(ctx, "s", "agent_a", lease.Version); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
}
