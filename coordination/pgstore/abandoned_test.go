package pgstore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers"
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
// creation ended (ready_at), and not before, even if it was begun long
// before, nor while its creation may be under way (no ready_at, begun less
// than coordination.UnfinishedCreationGrace ago; past it, a creation cut
// short is listed, not left running for ever), nor a step-driven session
// (no run lease by design), nor one whose run claimed it, nor one
// cancelled.
func TestAbandonedListsASessionItsCreatorNeverStarted(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	old := time.Now().Add(-coordination.NeverStartedGrace - coordination.MaxClockSkew - 5*time.Second)
	long := time.Now().Add(-coordination.UnfinishedCreationGrace - coordination.MaxClockSkew - 5*time.Second)
	for _, c := range []struct {
		id, driver     string
		created, ready time.Time
	}{
		{"never-started", coordination.DriverRun, old, old},
		{"just-created", coordination.DriverRun, time.Now(), time.Now()},
		{"created-slowly", coordination.DriverRun, old, time.Now()},
		{"still-creating", coordination.DriverRun, old, time.Time{}},
		{"creation-cut-short", coordination.DriverRun, long, time.Time{}},
		{"step-driven", coordination.DriverStep, old, old},
		{"started", coordination.DriverRun, old, old},
		{"cancelled", coordination.DriverRun, old, old},
	} {
		s := storetest.NewSession(c.id)
		s.Driver, s.CreatedAt, s.ReadyAt = c.driver, c.created, c.ready
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
	if !slices.Equal(ids, []string{"creation-cut-short", "never-started"}) {
		t.Fatalf("Abandoned = %v, want the sessions no run ever claimed, oldest first: one whose creation never recorded its end, begun past coordination.UnfinishedCreationGrace, and one created past the grace [creation-cut-short never-started]", ids)
	}
}

// TestTheLookForUnstartedRunsReadsNoStepDrivenSetup: a step-driven session
// its outer agent never finishes keeps no session entry for ever, as a run
// never started does. The every-second look for abandoned runs read and
// parsed the setup of every such session (172 ms for 2,000 idle ones of
// 40 KB); it now finds the run-driven ones through an index of their own
// (migration 14, on ready_at since 15), so its plan never scans the
// step-driven ones' setups.
func TestTheLookForUnstartedRunsReadsNoStepDrivenSetup(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if _, err := a.db.pool.Exec(ctx, `INSERT INTO sessions (tenant, id, created_at, setup, log_seq)
		SELECT $1, 'step_' || g, now() - interval '1 hour', json_build_object('id', 'step_' || g, 'task', repeat('x', 2000), 'driver', 'step'), 0
		FROM generate_series(1, 2000) g`, a.tenant); err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `ANALYZE sessions`); err != nil {
		t.Fatal(err)
	}
	grace := (coordination.NeverStartedGrace + coordination.MaxClockSkew).Seconds()
	unfinished := (coordination.UnfinishedCreationGrace + coordination.MaxClockSkew).Seconds()
	rows, err := a.db.pool.Query(ctx, "EXPLAIN "+abandonedRuns, a.tenant, grace, unfinished)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "sessions_unstarted_runs") {
		t.Errorf("the look for unstarted runs does not use its index:\n%s", plan.String())
	}
	if left, err := a.Abandoned(ctx); err != nil || len(left) != 0 {
		t.Errorf("Abandoned over idle step-driven sessions = %v, %v; want none", left, err)
	}
}

// TestAbandonedListsASessionWhoseLedgerHoldsOnlyItsCriteriaSpend: `run
// --criteria auto` records the criteria call written for the team as a
// usage entry as soon as the session's row is stored (TeamSpec.
// CriteriaUsage). A creator that died before its run claimed the session
// left one no run ever touched, which reads interrupted (coordination's
// unstarted: no entry but usage); the replicas' every-second look asked
// for no session entry at all (log_seq 0) and never found it, so `serve
// --resume-interrupted` never took it up. Now it is listed, with two usage
// entries too (a creation joined under its id records its own call); one
// whose log holds anything else (a cancel after the spend) is not.
func TestAbandonedListsASessionWhoseLedgerHoldsOnlyItsCriteriaSpend(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	old := time.Now().Add(-coordination.NeverStartedGrace - coordination.MaxClockSkew - 5*time.Second)
	cost := 0.004
	spend := func(id string) {
		t.Helper()
		e := coordination.SessionEntry{Kind: coordination.SessionUsage, Time: time.Now(), Reason: "criteria call, before the session was created",
			Usage: &providers.Usage{Input: 1200, Output: 300, CostUSD: &cost}}
		if _, err := a.AppendSession(ctx, id, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"criteria-spent", "spent-twice", "spent-then-cancelled"} {
		s := storetest.NewSession(id)
		s.Driver, s.CreatedAt, s.ReadyAt = coordination.DriverRun, old, old
		if err := a.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		spend(id)
	}
	spend("spent-twice")
	if _, err := a.AppendSession(ctx, "spent-then-cancelled", coordination.SessionEntry{Kind: coordination.SessionCancelled, Time: time.Now(), Reason: "not started: test"}); err != nil {
		t.Fatal(err)
	}
	ids, err := a.Abandoned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"criteria-spent", "spent-twice"}) {
		t.Fatalf("Abandoned = %v, want the run-driven sessions whose ledger holds only spend [criteria-spent spent-twice]", ids)
	}
}
