package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// TestSIGTERMLetsPostgresRunsRecordTheirCancelsBeforeTheDatabaseCloses:
// `serve --store postgres` stopped by SIGTERM while a blocking run_team's
// model calls are in flight. The run records its cancel before the
// database closes: the session has its cancelled entry, the run lease is
// released (it reads cancelled, not interrupted, so no replica runs it
// again), the caller hears no "closed pool", nor does the log; and the
// whole stop takes no longer than its bound.
func TestSIGTERMLetsPostgresRunsRecordTheirCancelsBeforeTheDatabaseCloses(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)
	a := startServer(t, bin, t.TempDir(), "-v", "--store", dsn)
	c := connect(t, a.url, nil)
	defer c.Close()

	const id = "pg_sigterm"
	team := map[string]any{"session_id": id, "task": "What is 17 * 23?", "models": []string{"sim:latency=10s:seed=1", "sim:latency=10s:seed=2", "sim:latency=10s:seed=3"}, "wait": true}
	type outcome struct {
		res *mcpgo.CallToolResult
		err error
	}
	answered := make(chan outcome, 1)
	go func() {
		res, err := callTool(ctx, c, "run_team", team)
		answered <- outcome{res, err}
	}()
	waitFor(t, 30*time.Second, "every agent's model call in flight", func() bool { return stepsStarted(ctx, st, id) == 3 })

	asked := time.Now()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- a.wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM; log:\n%s", err, a.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit within 30s of SIGTERM; log:\n%s", a.stderr.String())
	}
	if took, limit := time.Since(asked), mcp.DefaultShutdownTimeout+workGrace+closeGrace; took > limit {
		t.Errorf("serve took %v to stop after SIGTERM, want at most %v", took, limit)
	}

	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := false
	for _, e := range l.Session {
		cancelled = cancelled || e.Kind == coordination.SessionCancelled
	}
	if !cancelled {
		t.Errorf("the session has no cancelled entry after SIGTERM: %+v", l.Session)
	}
	if lease, err := st.ReadRun(ctx, id); err != nil || lease == nil || !lease.Released {
		t.Errorf("the run lease after SIGTERM is %+v (%v), want released: left, the session reads interrupted and a replica runs it again", lease, err)
	}
	for _, bad := range []string{"closed pool", "could not record"} {
		if strings.Contains(a.stderr.String(), bad) {
			t.Errorf("the log says %q: the database closed under the runs' ends:\n%s", bad, a.stderr.String())
		}
	}
	select {
	case o := <-answered:
		if o.err == nil && strings.Contains(resultText(o.res), "closed pool") {
			t.Errorf("run_team answered %q", resultText(o.res))
		}
	case <-time.After(5 * time.Second):
		t.Error("run_team never answered after the server stopped")
	}
}

// TestATenantAddedBySIGHUPIsFailedOver: replica B (--resume-interrupted)
// starts with a tokens file naming alice; bob is added and B reloaded with
// SIGHUP. A run of bob's on replica A, SIGKILLed mid-run, is claimed by B
// within its lease's expiry, though no request of bob's ever reached B.
func TestATenantAddedBySIGHUPIsFailedOver(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	const alice, bob = "alice-dummy-token-not-a-secret", "bob-dummy-token-not-a-secret"
	dir := t.TempDir()
	tokensB, tokensA := filepath.Join(dir, "tokens-b"), filepath.Join(dir, "tokens-a")
	if err := os.WriteFile(tokensB, []byte("alice "+alice+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokensA, []byte("bob "+bob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startServer(t, bin, t.TempDir(), "-v", "--store", dsn, "--tokens-file", tokensB, "--resume-interrupted")
	if err := os.WriteFile(tokensB, []byte("alice "+alice+"\nbob "+bob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = b.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "B reloading its tokens file", func() bool { return strings.Contains(b.stderr.String(), "tokens file reloaded") })

	st := pgTenant(t, dsn, "bob")
	a := startServer(t, bin, t.TempDir(), "--store", dsn, "--tokens-file", tokensA)
	c := connect(t, a.url, map[string]string{"Authorization": "Bearer " + bob})
	const id = "bob_failover"
	if res, err := callTool(ctx, c, "run_team", crashTeam(id, 7)); err != nil || res.IsError {
		t.Fatalf("run_team for bob on A: %v %s", err, resultText(res))
	}
	waitFor(t, 30*time.Second, "a first step on A", func() bool { return steps(ctx, st, id) > 0 })
	c.Close()
	a.kill()
	if finishedIn(ctx, st, id) {
		t.Skip("the team finished before A was killed; nothing to fail over")
	}
	waitFor(t, coordination.DefaultLeaseTTL+10*time.Second, "B claiming bob's run", func() bool {
		l, err := st.ReadRun(ctx, id)
		return err == nil && l != nil && l.PID == b.cmd.Process.Pid
	})
}

// TestSIGTERMedReplicaHandsItsRunsOver: two `serve --store postgres
// --resume-interrupted` replicas; a team started on A, A stopped with
// SIGTERM mid-run (a rolling restart). A hands the run over rather than
// cancel it: it writes no cancel and makes its lease expire, B takes the
// run up within seconds and finishes it, and the ledger is whole.
// Cancelled, the run waited for its user to resume it by hand.
func TestSIGTERMedReplicaHandsItsRunsOver(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)
	a := startServer(t, bin, t.TempDir(), "-v", "--store", dsn, "--resume-interrupted")
	b := startServer(t, bin, t.TempDir(), "--store", dsn, "--resume-interrupted")
	c := connect(t, a.url, nil)
	const id = "pg_handover"
	team := crashTeam(id, 11)
	team["models"] = []string{"sim:latency=1s:seed=11", "sim:latency=1s:seed=12", "sim:latency=1s:seed=13"}
	if res, err := callTool(ctx, c, "run_team", team); err != nil || res.IsError {
		t.Fatalf("run_team on A: %v %s", err, resultText(res))
	}
	waitFor(t, 30*time.Second, "a first step on A", func() bool { return steps(ctx, st, id) > 0 })
	c.Close()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	if err := a.wait(); err != nil {
		t.Fatalf("A exited with %v after SIGTERM; log:\n%s", err, a.stderr.String())
	}
	if finishedIn(ctx, st, id) {
		t.Skip("the team finished before A stopped; nothing to hand over")
	}
	exited := time.Now()
	if l, err := st.ReadRun(ctx, id); err != nil || l == nil || l.Released {
		t.Fatalf("A's run lease after SIGTERM: %+v, %v; want it left for B", l, err)
	}
	// The hand-over expires A's lease: B's next look (every second) claims
	// it, not the lease's TTL later.
	waitFor(t, coordination.DefaultLeaseTTL, "B claiming the handed-over run", func() bool {
		l, err := st.ReadRun(ctx, id)
		return err == nil && l != nil && l.PID == b.cmd.Process.Pid
	})
	if took := time.Since(exited); took > coordination.DefaultLeaseTTL/2 {
		t.Errorf("B claimed the handed-over run %v after A exited; want within a couple of its looks, not the lease's %v", took, coordination.DefaultLeaseTTL)
	} else {
		t.Logf("B claimed the handed-over run %v after A exited", took.Round(time.Millisecond))
	}
	waitFor(t, 60*time.Second, "B finishing the handed-over run", func() bool { return finishedIn(ctx, st, id) })
	if l, err := st.ReadRun(ctx, id); err != nil || l == nil || l.PID != b.cmd.Process.Pid {
		t.Errorf("the run lease at the end: %+v, %v; want B's", l, err)
	}
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionCancelled {
			t.Errorf("the handed-over session was cancelled: %+v", e)
		}
	}
	checkStoredLedger(t, st, id)
	// The timeline and A's log say the run was handed over; it did not die.
	if !strings.Contains(a.stderr.String(), "handing this server's runs over") {
		t.Errorf("A's log does not say it handed its runs over:\n%s", a.stderr.String())
	}
	cb := connect(t, b.url, nil)
	defer cb.Close()
	if told := timelineSays(t, cb, id, "resumed"); len(told) == 0 || !strings.Contains(told[0], "was handed over as its server stopped") || strings.Contains(told[0], "died") {
		t.Errorf("the timeline's takeover reads %q; want the run handed over, not dead", told)
	}
}
