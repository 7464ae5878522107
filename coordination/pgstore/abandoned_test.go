package pgstore

import (
	"context"
	"encoding/json"
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

// TestTheLookForSpentUnstartedRunsReadsOnlyTheirIndex: the every-second
// look finds the run-driven sessions whose log holds only usage entries
// through an index of their own (migration 26), beside version 15's for
// those with no entry: over 1,000 runs that ran (their criteria call's
// usage entry, then their end) and 1,000 idle step-driven sessions, its
// plan reads the sessions through the two indexes and never scans them.
func TestTheLookForSpentUnstartedRunsReadsOnlyTheirIndex(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO sessions (tenant, id, created_at, ready_at, setup, log_seq)
			SELECT $1, 'ran_' || g, now() - interval '1 hour', now() - interval '1 hour', json_build_object('id', 'ran_' || g, 'task', repeat('x', 2000), 'driver', 'run'), 2
			FROM generate_series(1, 1000) g`,
		`INSERT INTO sessions (tenant, id, created_at, setup)
			SELECT $1, 'step_' || g, now() - interval '1 hour', json_build_object('id', 'step_' || g, 'task', repeat('x', 2000), 'driver', 'step')
			FROM generate_series(1, 1000) g`,
		`INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released)
			SELECT $1, 'ran_' || g, a, 'replica', 'host', 1, 1, 1, now() - interval '1 hour', now() - interval '1 hour', now() - interval '1 hour', true
			FROM generate_series(1, 1000) g, unnest(ARRAY['', 'agent_a', 'agent_b']) a`,
		`INSERT INTO session_log (tenant, session_id, seq, kind, at, entry)
			SELECT $1, 'ran_' || g, n, k, now(), '{}' FROM generate_series(1, 1000) g, (VALUES (1, 'usage'), (2, 'finished')) AS e(n, k)`,
	} {
		if _, err := a.db.pool.Exec(ctx, q, a.tenant); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"never-started", "criteria-spent"} {
		s := storetest.NewSession(id)
		old := time.Now().Add(-time.Hour)
		s.Driver, s.CreatedAt, s.ReadyAt = coordination.DriverRun, old, old
		if err := a.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.AppendSession(ctx, "criteria-spent", coordination.SessionEntry{Kind: coordination.SessionUsage, Time: time.Now(), Usage: &providers.Usage{Input: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"sessions", "leases", "session_log"} {
		if _, err := a.db.pool.Exec(ctx, `VACUUM ANALYZE `+table); err != nil {
			t.Fatal(err)
		}
	}
	grace := (coordination.NeverStartedGrace + coordination.MaxClockSkew).Seconds()
	unfinished := (coordination.UnfinishedCreationGrace + coordination.MaxClockSkew).Seconds()
	rows, err := a.db.pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+abandonedRuns, a.tenant, grace, unfinished)
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
	t.Logf("the look over 1,000 runs that ran and 1,000 idle step-driven sessions:\n%s", plan.String())
	for _, want := range []string{"sessions_unstarted_runs", "sessions_spent_unstarted_runs"} {
		if !strings.Contains(plan.String(), want) {
			t.Errorf("the look does not use index %s:\n%s", want, plan.String())
		}
	}
	// The leases' branch (an unreleased run lease past its expiry) is
	// older and not this index's: at this size its table is a few pages
	// and the planner reads it whole.
	if strings.Contains(plan.String(), "Seq Scan on sessions") {
		t.Errorf("the look scans the sessions:\n%s", plan.String())
	}
	ids, err := a.Abandoned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"criteria-spent", "never-started"}) {
		t.Errorf("Abandoned = %v; want [criteria-spent never-started]", ids)
	}
}

// TestASessionSpentBeforeMigration26IsFoundAfterIt: a session stored by an
// earlier version with only its criteria call's usage entry, its creator
// gone, is listed once the schema is migrated (the migration counts the
// usage entries of the logs that hold nothing else); one whose log holds
// another entry after its usage is not.
func TestASessionSpentBeforeMigration26IsFoundAfterIt(t *testing.T) {
	dsn, conn := schemaBelow(t, 26)
	ctx := context.Background()
	old := time.Now().Add(-time.Hour)
	for _, c := range []struct {
		id    string
		kinds []string
	}{
		{"criteria-spent", []string{"usage"}},
		{"spent-then-cancelled", []string{"usage", "cancelled"}},
	} {
		setup, err := json.Marshal(map[string]string{"id": c.id, "driver": coordination.DriverRun})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO sessions (tenant, id, created_at, ready_at, setup, log_seq) VALUES ('default', $1, $2, $2, $3, $4)`,
			c.id, old, setup, len(c.kinds)); err != nil {
			t.Fatal(err)
		}
		for i, k := range c.kinds {
			if _, err := conn.Exec(ctx, `INSERT INTO session_log (tenant, session_id, seq, kind, at, entry) VALUES ('default', $1, $2, $3, now(), '{}')`,
				c.id, i+1, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	db, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cs, err := db.For("default")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := cs.(*Store).Abandoned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"criteria-spent"}) {
		t.Errorf("after migration 26, Abandoned = %v; want [criteria-spent]", ids)
	}
}
