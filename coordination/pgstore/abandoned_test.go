package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestAbandonedListsOnlyRunsThatReadInterrupted: a run lease that expired
// unreleased is listed while its session would read interrupted, and not
// once a cancel stands (the replicas' every-second look would otherwise
// list the tenant's sessions in full for ever) or the session finished;
// a resume after the cancel lists it again.
func TestAbandonedListsOnlyRunsThatReadInterrupted(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	for _, id := range []string{"dead", "cancelled", "finished"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AcquireRun(ctx, id, coordination.LeaseOwner{ID: "dead-replica", Host: "elsewhere", PID: 1}, time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	add := func(id string, kind coordination.SessionEntryKind) {
		t.Helper()
		e := coordination.SessionEntry{Kind: kind, Time: time.Now(), Reason: "test"}
		if kind == coordination.SessionFinished {
			e.Result = &coordination.TeamResult{SessionID: id, Status: coordination.StatusFinished}
		}
		if _, err := a.AppendSession(ctx, id, e); err != nil {
			t.Fatal(err)
		}
	}
	add("cancelled", coordination.SessionCancelled)
	add("finished", coordination.SessionFinished)
	time.Sleep(10 * time.Millisecond)
	listed := func() []string {
		t.Helper()
		ids, err := a.Abandoned(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return ids
	}
	if got := listed(); !slices.Equal(got, []string{"dead"}) {
		t.Fatalf("Abandoned = %v, want only the dead run [dead]", got)
	}
	add("cancelled", coordination.SessionResumed)
	if got := listed(); !slices.Equal(got, []string{"cancelled", "dead"}) {
		t.Fatalf("after a resume, Abandoned = %v, want [cancelled dead]", got)
	}
	add("cancelled", coordination.SessionCancelled)
	if got := listed(); !slices.Equal(got, []string{"dead"}) {
		t.Fatalf("after a second cancel, Abandoned = %v, want [dead]", got)
	}
}

// TestAbandonedListsASessionItsCreatorNeverStarted: a session created for a
// run with no run lease at all (its replica died before its run claimed
// it) is listed once coordination.NeverStartedGrace has passed since its
// creation, and not before, nor a step-driven session (no run lease by
// design), nor one whose run claimed it, nor one cancelled.
func TestAbandonedListsASessionItsCreatorNeverStarted(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	old := time.Now().Add(-coordination.NeverStartedGrace - coordination.MaxClockSkew - 5*time.Second)
	for _, c := range []struct {
		id, driver string
		created    time.Time
	}{
		{"never-started", coordination.DriverRun, old},
		{"just-created", coordination.DriverRun, time.Now()},
		{"step-driven", coordination.DriverStep, old},
		{"started", coordination.DriverRun, old},
		{"cancelled", coordination.DriverRun, old},
	} {
		s := storetest.NewSession(c.id)
		s.Driver, s.CreatedAt = c.driver, c.created
		if err := a.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	unlock, l, err := claimRun(ctx, a, "started", "live-replica")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	defer func() { _ = a.ReleaseRun(ctx, "started", l.Version) }()
	if _, err := a.AppendSession(ctx, "cancelled", coordination.SessionEntry{Kind: coordination.SessionCancelled, Time: time.Now(), Reason: "not started: test"}); err != nil {
		t.Fatal(err)
	}
	ids, err := a.Abandoned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"never-started"}) {
		t.Fatalf("Abandoned = %v, want only the session no run ever claimed [never-started]", ids)
	}
}
