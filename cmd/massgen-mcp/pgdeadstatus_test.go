package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAKilledReplicasRunReadsInterruptedOnAnotherWithinSeconds: a run
// whose replica was SIGKILLed mid-run reads interrupted in team_status on
// another replica (one that resumes nothing, so the state stays to be
// read) within a few seconds of the kill: the database dropped the dead
// process's liveness lock with its connection, and the survivor's looks
// for dead replicas expired its lease (pgstore's liveness.go). Before,
// it read running for the lease's whole TTL (10 s) after the death.
func TestAKilledReplicasRunReadsInterruptedOnAnotherWithinSeconds(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	st := pgTenant(t, dsn, coordination.DefaultTenant)
	a := startServer(t, bin, t.TempDir(), "--store", dsn)
	b := startServer(t, bin, t.TempDir(), "--store", dsn, "--rate", "-1")
	ca, cb := connect(t, a.url, nil), connect(t, b.url, nil)
	defer cb.Close()

	// Two of B's one-second looks see A gone; a run read running for the
	// lease's TTL (10 s) is over the limit even under the race detector.
	took := killedRunReadsInterrupted(t, "pg_dead_status", a, ca, st, func(id string) string { return statusOn(t, cb, id) }, 4*time.Second, 7*time.Second)
	t.Logf("A SIGKILLed mid-run: B reads its run interrupted %v after the kill", took.Round(time.Millisecond))
}

// TestALoneKilledReplicasRunReadsInterruptedToStatus: with no replica
// left to reap it (one server, SIGKILLed mid-run), `massgen-mcp status
// --store` reads the run interrupted within seconds of the kill, not a
// lease's TTL later: its read sees the dead process's liveness lock free
// and its beats stopped (pgstore's holderGone), and writes nothing.
func TestALoneKilledReplicasRunReadsInterruptedToStatus(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	waitOutARecentRestart(t, dsn)
	a := startServer(t, bin, t.TempDir(), "--store", dsn)
	ca := connect(t, a.url, nil)
	// The test's own reads open as a command does: a replica in the test
	// process would reap A itself.
	db, err := pgstore.Open(ctx, dsn, pgstore.Options{Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tenant, err := db.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	st := tenant.(*pgstore.Store)

	// The beats must have stopped for 3 s (a second or less of it before
	// the kill); the lease's TTL is 10 s.
	took := killedRunReadsInterrupted(t, "pg_lone_dead_status", a, ca, st, func(id string) string { return statusOf(t, dsn, id) }, 5*time.Second, 8*time.Second)
	t.Logf("the lone server SIGKILLed mid-run: status reads its run interrupted %v after the kill", took.Round(time.Millisecond))
}

// killedRunReadsInterrupted starts a slow team id through ca on a, waits
// for its first step and for status to read it running, SIGKILLs a and
// returns how long after the kill status reads the run interrupted: within
// limit (raceLimit under the race detector), or the test fails.
func killedRunReadsInterrupted(t *testing.T, id string, a *server, ca *client.Client, st *pgstore.Store, status func(id string) string, limit, raceLimit time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	args := slowTeam(id, 7)
	args["wait"] = false
	if res, err := callTool(ctx, ca, "run_team", args); err != nil || res.IsError {
		t.Fatalf("run_team: %v %s", err, resultText(res))
	}
	waitFor(t, 30*time.Second, "a first step", func() bool { return steps(ctx, st, id) > 0 })
	if s := status(id); s != coordination.StatusRunning {
		t.Fatalf("status while the server runs: %q, want running", s)
	}
	ca.Close()
	a.kill()
	killed := time.Now()
	var took time.Duration
	waitFor(t, 2*coordination.DefaultLeaseTTL, "status to read the run interrupted", func() bool {
		if status(id) != coordination.StatusInterrupted {
			return false
		}
		took = time.Since(killed)
		return true
	})
	if raceEnabled {
		limit = raceLimit
	}
	if took > limit {
		t.Errorf("status read the run interrupted %v after the kill, want within %v", took, limit)
	}
	return took
}

// waitOutARecentRestart waits until the database has been up for longer
// than a command's open takes its start for an outage that excuses every
// holder (pgstore's restartseen.go: a minute's outage ending 10 s after
// the start, excused a lock's TTL and the clock allowance more).
func waitOutARecentRestart(t *testing.T, dsn string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	var up time.Duration
	err = conn.QueryRow(context.Background(), `SELECT (extract(epoch FROM now() - pg_postmaster_start_time()) * 1000)::bigint * interval '1 millisecond'`).Scan(&up)
	_ = conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if excused := 10*time.Second + 10*time.Second + coordination.MaxClockSkew + time.Second; up < excused {
		t.Logf("the database started %v ago: waiting %v for its restart to excuse nobody", up.Round(time.Second), (excused - up).Round(time.Second))
		time.Sleep(excused - up)
	}
}

// statusOf is the session's status as `massgen-mcp status --json --store`
// says it.
func statusOf(t *testing.T, dsn, id string) string {
	t.Helper()
	out, errOut, code := cliSplit(t, "status", "--json", "--store", dsn, id)
	if code != 0 {
		t.Fatalf("status --json --store: exit %d\n%s%s", code, out, errOut)
	}
	var s struct {
		Result struct {
			Status string `json:"status"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json --store: %v\n%s", err, out)
	}
	return s.Result.Status
}

// statusOn is the session's status as team_status on c says it.
func statusOn(t *testing.T, c *client.Client, id string) string {
	t.Helper()
	res, err := callTool(context.Background(), c, "team_status", map[string]any{"session_id": id})
	if err != nil || res.IsError {
		t.Fatalf("team_status: %v %s", err, resultText(res))
	}
	var s struct {
		Result struct {
			Status string `json:"status"`
		} `json:"result"`
	}
	if err := structured(res, &s); err != nil {
		t.Fatal(err)
	}
	return s.Result.Status
}
