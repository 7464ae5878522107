package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// slowTeam is a four-agent sim team whose steps take about a second, so a
// run is still going when the database goes away.
func slowTeam(id string, seed int) map[string]any {
	return map[string]any{
		"session_id": id,
		"task":       "What is 17 * 23?",
		"models": []string{
			fmt.Sprintf("sim/strong:latency=700ms:seed=%d", seed), fmt.Sprintf("sim:latency=1s:seed=%d", seed+1),
			fmt.Sprintf("sim:accuracy=0.5:latency=800ms:seed=%d", seed+2), fmt.Sprintf("sim/strong:latency=900ms:seed=%d", seed+3),
		},
	}
}

// progressLog collects a client's progress notifications.
type progressLog struct {
	mu  sync.Mutex
	got []string
}

func (p *progressLog) hear(c *client.Client) {
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method != string(mcpgo.MethodNotificationProgress) {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, fmt.Sprint(n.Params.AdditionalFields["message"]))
	})
}

func (p *progressLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.got...)
}

func (p *progressLog) saying(s string) []string {
	var out []string
	for _, m := range p.all() {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// callWithProgress calls a tool asking for progress notifications.
func callWithProgress(ctx context.Context, c *client.Client, tool string, args map[string]any) (*mcpgo.CallToolResult, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = &mcpgo.Meta{ProgressToken: "p-" + tool}
	return c.CallTool(ctx, req)
}

// TestADatabaseRestartedMidRunPausesTheRunAndItGoesOn: `serve --store
// postgres` on a PostgreSQL of the test's own, a team running with
// run_team{wait}; the database is stopped (as an operator's restart does),
// kept down for a few seconds and started again. The run pauses while it is
// down (the blocking call's progress says so), goes on when it is back, and
// finishes with its ledger whole; the outage is in the session's timeline
// (team_status), and the run lease never changed hands. It stays down
// longer than a run lease's TTL, with a second replica resuming interrupted
// runs: the lease ran out while nobody could reach the database, so the
// second replica reads the run going on and leaves it to its holder, which
// renews as soon as it can. Before, it read interrupted at once on every
// replica, and the resumer took it over from its live holder.
func TestADatabaseRestartedMidRunPausesTheRunAndItGoesOn(t *testing.T) {
	pg := pgtest.StartPrivate(t)
	runAcrossAnOutage(t, pg, pg.Stop, coordination.DefaultLeaseTTL+2*time.Second, true)
}

// TestADatabaseCrashedMidRunPausesTheRunAndItGoesOn: the same with the
// database crashed (`pg_ctl stop -m immediate`) instead: it recovers from
// its WAL as it starts again, which empties the unlogged locks table under
// the run's held locks. The run still pauses, retries, takes its lock rows
// back (their leases, logged rows, fence them) and finishes under the same
// claim, its ledger whole entry by entry.
func TestADatabaseCrashedMidRunPausesTheRunAndItGoesOn(t *testing.T) {
	pg := pgtest.StartPrivate(t)
	runAcrossAnOutage(t, pg, pg.Crash, 4*time.Second, false)
	if !strings.Contains(pg.Log(), "automatic recovery in progress") {
		t.Errorf("the database did not recover from a crash as it started again; its log:\n%s", pg.Log())
	}
}

// runAcrossAnOutage runs a team with run_team{wait} on a private database,
// stops it with stop mid-run, keeps it down for down, starts it again and
// checks the run paused, went on and finished, its ledger whole, under the
// same claim. With resumer, a second replica resuming interrupted runs
// shares the database and must read the run as running throughout.
func runAcrossAnOutage(t *testing.T, pg *pgtest.Private, stop func() error, down time.Duration, resumer bool) {
	bin := binary(t)
	ctx := context.Background()
	db, err := pgstore.Open(ctx, pg.DSN, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sto, _ := db.For(coordination.DefaultTenant)
	st := sto.(*pgstore.Store)

	a := startServer(t, bin, t.TempDir(), "--store", pg.DSN, "--rate", "-1")
	c := connect(t, a.url, nil)
	defer c.Close()
	var heard progressLog
	heard.hear(c)
	var other *client.Client
	if resumer {
		b := startServer(t, bin, t.TempDir(), "--store", pg.DSN, "--rate", "-1", "--resume-interrupted")
		other = connect(t, b.url, nil)
		defer other.Close()
	}

	const id = "pg_restarted"
	args := slowTeam(id, 7)
	args["wait"] = true
	type outcome struct {
		res *mcpgo.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := callWithProgress(ctx, c, "run_team", args)
		done <- outcome{res, err}
	}()
	waitFor(t, 30*time.Second, "a first step", func() bool { return steps(ctx, st, id) > 0 })
	before := steps(ctx, st, id)
	lease, err := st.ReadRun(ctx, id)
	if err != nil || lease == nil {
		t.Fatalf("the run lease before the restart: %+v, %v", lease, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// The load balancer's health check takes the replica out while its
	// database is down, and back in once it answers.
	health := func() int {
		resp, err := http.Get(a.url + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	unhealthy := false
	for time.Since(stopped) < down {
		unhealthy = unhealthy || health() == http.StatusServiceUnavailable
		time.Sleep(200 * time.Millisecond)
	}
	if !unhealthy {
		t.Errorf("/healthz never answered 503 while the database was down")
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	waitFor(t, 10*time.Second, "/healthz answering 200 once the database is back", func() bool { return health() == http.StatusOK })
	if other != nil {
		// The holder's next renewal comes within a heartbeat; until a
		// lease's TTL has passed the other replica must not call the run
		// interrupted, nor take it.
		for time.Since(back) < coordination.DefaultHeartbeat+2*time.Second {
			res, err := callTool(ctx, other, "team_status", map[string]any{"session_id": id})
			if err == nil && !res.IsError {
				var st struct {
					Result struct {
						Status string `json:"status"`
					} `json:"result"`
				}
				if err := structured(res, &st); err != nil || (st.Result.Status != coordination.StatusRunning && st.Result.Status != coordination.StatusFinished) {
					t.Errorf("%v after the database came back the other replica reads the run %q (%v); its holder is alive", time.Since(back).Round(time.Millisecond), st.Result.Status, err)
					break
				}
				if st.Result.Status == coordination.StatusFinished {
					break // its holder finished it: true, and nothing left to take
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	t.Logf("the database was down %v (stop to ready), %d steps had landed", back.Sub(stopped).Round(time.Millisecond), before)

	var out outcome
	select {
	case out = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("run_team did not return within 2 minutes of the database coming back; server log:\n%s", pg.Log())
	}
	if out.err != nil || out.res.IsError {
		t.Fatalf("run_team across the restart: %v %s", out.err, resultText(out.res))
	}
	var tr struct {
		Status string `json:"status"`
	}
	if err := structured(out.res, &tr); err != nil || tr.Status != coordination.StatusFinished {
		t.Fatalf("run_team across the restart = %q (%v), want finished: %s", tr.Status, err, resultText(out.res))
	}
	checkStoredLedger(t, st, id)
	if n := steps(ctx, st, id); n <= before {
		t.Errorf("%d steps after the restart, %d before: the run did not go on", n, before)
	}
	after, err := st.ReadRun(ctx, id)
	if err != nil || after == nil || after.Version != lease.Version || after.PID != lease.PID || !after.Released {
		t.Errorf("the run lease after = %+v (%v), want the same claim (version %d, pid %d), released at the end", after, err, lease.Version, lease.PID)
	}
	// Unreachable, or unavailable with the cause the database told (a
	// crashed server's restart answers "starting up" before it is back).
	paused := append(heard.saying("store is unreachable"), heard.saying("store is unavailable (")...)
	resumed := append(heard.saying("store was unreachable"), heard.saying("store was unavailable (")...)
	if len(paused) == 0 || len(resumed) == 0 {
		t.Fatalf("progress said nothing of the outage (%d pause, %d back messages): %q", len(paused), len(resumed), heard.all())
	}
	told := timelineSays(t, c, id, "store_outage")
	if len(told) == 0 {
		t.Fatal("team_status's timeline has no store_outage event")
	}
	// The driver's error names the database's role, name and host: the
	// operator's log keeps it, a client's timeline and progress do not.
	for _, msg := range append(append(told, paused...), resumed...) {
		if strings.Contains(msg, "user=") || strings.Contains(msg, "database=") || strings.Contains(msg, "127.0.0.1") {
			t.Errorf("an outage message shows the database's connection details: %q", msg)
		}
	}
	t.Logf("the run paused (%d progress messages, first %q), went on (%q) and finished; timeline: %q",
		len(paused), paused[0], resumed[0], told)
}

// timelineSays is the messages of the session's timeline events of a type,
// as team_status{detail: full} through c shows them.
func timelineSays(t *testing.T, c *client.Client, id, typ string) []string {
	t.Helper()
	res, err := callTool(context.Background(), c, "team_status", map[string]any{"session_id": id, "detail": "full"})
	if err != nil || res.IsError {
		t.Fatalf("team_status: %v %s", err, resultText(res))
	}
	var status struct {
		Timeline []coordination.Event `json:"timeline"`
	}
	if err := structured(res, &status); err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, ev := range status.Timeline {
		if ev.Type == typ {
			told = append(told, ev.Message)
		}
	}
	return told
}
