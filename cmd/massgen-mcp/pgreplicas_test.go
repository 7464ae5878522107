package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
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

// TestStoreFlagAndEnvironmentChooseTheStore: --store wins over
// MASSGEN_STORE; a postgres:// URL opens the PostgreSQL store, shared by
// every tenant; anything else is refused naming where it came from.
func TestStoreFlagAndEnvironmentChooseTheStore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("MASSGEN_STORE", "sqlite://nope")
	if _, err := servedStores(ctx, serveFlags{}); !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "MASSGEN_STORE") {
		t.Errorf("MASSGEN_STORE=sqlite://nope: %v, want ErrBadInput naming MASSGEN_STORE", err)
	}
	if st, err := servedStores(ctx, serveFlags{store: "memory"}); err != nil || st == nil {
		t.Errorf("--store memory (over the environment) = %v, %v", st, err)
	}
	dsn := pgtest.Schema(t)
	t.Setenv("MASSGEN_STORE", dsn)
	st, err := servedStores(ctx, serveFlags{})
	if err != nil {
		t.Fatalf("MASSGEN_STORE=%s: %v", dsn, err)
	}
	db, ok := st.(*pgstore.DB)
	if !ok {
		t.Fatalf("MASSGEN_STORE=postgres://… opened %T, want the PostgreSQL store", st)
	}
	defer db.Close() // serve closes it once its server has returned (closeStores)
	if _, err := servedStores(ctx, serveFlags{memory: true, store: dsn}); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("--memory with --store postgres://… = %v, want ErrBadInput", err)
	}
}

// TestPostgresReplicasFinishWhatAKilledOneStarted is the failover suite:
// two `serve --store postgres` processes on one database. Teams start
// through A; A is SIGKILLed at a random moment mid-run, 20 times (a new A
// each time); B (looking for abandoned runs) claims each run within a few
// seconds of its kill, the database having dropped A's liveness lock with
// its connection (pgstore's liveness.go), well within the lease's expiry,
// and finishes it.
// MASSGEN_PG_KILLS sets the number of kills, MASSGEN_PG_SEED the seed.
// Every ledger is then read from the database and checked entry by entry.
func TestPostgresReplicasFinishWhatAKilledOneStarted(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	kills := envInt("MASSGEN_PG_KILLS", 20)
	seed := envInt("MASSGEN_PG_SEED", 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 31))
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)

	b := startServer(t, bin, t.TempDir(), "--store", dsn, "--resume-interrupted")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica B's log, the end:\n%s", b.logTail(8<<10))
		}
	})
	// The next A starts as soon as the last one is killed, not once B has
	// claimed its runs: each kill's runs wait for B to see A gone before
	// B may claim them (they waited out a lease's expiry, 10 s, before
	// the liveness lock), so twenty kills one after another were minutes
	// of waiting. Overlapped, the expiries of several dead
	// A's run at once and B claims each run in its own time, which
	// claimWatch measures from that run's kill.
	claims := watchClaims(t, st, b.cmd.Process.Pid)
	var ids []string
	for k := range kills {
		a := startServer(t, bin, t.TempDir(), "--store", dsn)
		c := connect(t, a.url, nil)
		var round []string
		for slot := range 2 {
			id := fmt.Sprintf("pg_%d_%d", k, slot)
			res, err := callTool(ctx, c, "run_team", crashTeam(id, seed*1000+len(ids)))
			if err != nil || res.IsError {
				t.Fatalf("kill %d: run_team %s on A: %v %s", k, id, err, resultText(res))
			}
			round = append(round, id)
			ids = append(ids, id)
		}
		// A kill lands after a first step, at a random moment.
		waitFor(t, 30*time.Second, "a first step on A", func() bool { return steps(ctx, st, round[0]) > 0 })
		time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond)
		c.Close()
		a.kill()
		killed := time.Now()
		for _, id := range round {
			if !finishedIn(ctx, st, id) {
				claims.expect(id, killed)
			}
		}
	}
	failovers := claims.wait(coordination.DefaultLeaseTTL + 10*time.Second)
	for _, id := range ids {
		waitFor(t, 2*time.Minute, id+" finishing on B", func() bool { return finishedIn(ctx, st, id) })
		checkStoredLedger(t, st, id)
	}
	if len(failovers) == 0 {
		t.Fatal("no kill found a team mid-run; the suite is not failing anything over")
	}
	var worst time.Duration
	for _, d := range failovers {
		worst = max(worst, d)
	}
	// A's death is seen within two of B's one-second looks for dead
	// replicas, and its runs taken up at B's next look for abandoned ones:
	// some 3 s. A failover that waited out the lease's TTL (10 s) reads
	// over the limit.
	limit := 6 * time.Second
	if raceEnabled {
		// The race detector slows both replicas several-fold on two cores
		// shared with CI's other lanes, and B's looks with them (CI once
		// read 2.2 s over the target then); the target is measured without
		// it (docs/BENCHMARKS.md).
		limit = 8 * time.Second
	}
	if worst > limit {
		t.Errorf("the slowest failover took %v, want at most %v", worst, limit)
	}
	t.Logf("%d SIGKILLs of A, %d runs failed over to B (slowest %v after the kill, lease TTL %v), %d sessions finished, every ledger whole",
		kills, len(failovers), worst.Round(time.Millisecond), coordination.DefaultLeaseTTL, len(ids))
}

// claimWatch measures, for each run left by a killed replica, how long
// after the kill B claimed it (its run lease naming B's process, claimed
// when B stamped it).
type claimWatch struct {
	t     *testing.T
	st    *pgstore.Store
	pid   int
	mu    sync.Mutex
	since map[string]time.Time     // runs not yet claimed: id → kill
	took  map[string]time.Duration // runs claimed: id → kill to claim
	stop  chan struct{}
	done  chan struct{}
}

func watchClaims(t *testing.T, st *pgstore.Store, pid int) *claimWatch {
	w := &claimWatch{t: t, st: st, pid: pid, since: map[string]time.Time{}, took: map[string]time.Duration{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	t.Cleanup(w.halt)
	return w
}

// expect says the run was left by a replica killed at killed.
func (w *claimWatch) expect(id string, killed time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since[id] = killed
}

func (w *claimWatch) run() {
	defer close(w.done)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		pending := maps.Clone(w.since)
		w.mu.Unlock()
		for id, killed := range pending {
			l, err := w.st.ReadRun(context.Background(), id)
			if err != nil || l == nil || l.PID != w.pid {
				continue
			}
			w.mu.Lock()
			delete(w.since, id)
			// B's own stamp of its claim, not when this poll saw it: the
			// poll reads each pending run in turn, and on a loaded machine
			// those reads, not B, made the claims look later.
			w.took[id] = l.Claimed.Sub(killed)
			w.mu.Unlock()
		}
	}
}

func (w *claimWatch) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// wait waits until B has claimed every run expected, each within limit of
// its kill, and returns the times from kill to claim.
func (w *claimWatch) wait(limit time.Duration) []time.Duration {
	w.t.Helper()
	for {
		w.mu.Lock()
		var late []string
		for id, killed := range w.since {
			if time.Since(killed) <= limit {
				continue
			}
			if finishedIn(context.Background(), w.st, id) {
				// Ended by the killed replica's last commit, a batch it
				// had sent that the database took after the kill (the
				// look at the kill came first), or by B between two
				// looks here: no run is left to claim.
				w.t.Logf("%s finished with no claim seen: the killed replica's last write ended it", id)
				delete(w.since, id)
				continue
			}
			late = append(late, id)
		}
		left := len(w.since)
		w.mu.Unlock()
		if len(late) > 0 {
			slices.Sort(late)
			w.t.Fatalf("no B claiming %s within %v of its kill", strings.Join(late, ", "), limit)
		}
		if left == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.halt()
	return slices.Collect(maps.Values(w.took))
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func steps(ctx context.Context, st coordination.Store, id string) int {
	l, err := st.Ledger(ctx, id)
	if err != nil {
		return 0
	}
	n := 0
	for _, es := range l.Agents {
		n += len(es)
	}
	return n
}

func finishedIn(ctx context.Context, st coordination.Store, id string) bool {
	l, err := st.Ledger(ctx, id)
	if err != nil {
		return false
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionFinished {
			return true
		}
	}
	return false
}

// checkStoredLedger checks a finished session's ledger in a store entry by
// entry: steps 1..n with no gap or duplicate, answers numbered 1..k, one
// finished entry with a winner, session entries numbered 1..m.
func checkStoredLedger(t *testing.T, st coordination.Store, id string) {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	for agent, entries := range l.Agents {
		k := 0
		for i, e := range entries {
			if e.Step != i+1 || e.Agent != agent {
				t.Errorf("%s/%s: entry %d is %s step %d; want step %d (a gap or a duplicate)", id, agent, i, e.Agent, e.Step, i+1)
			}
			if e.Kind == coordination.KindAnswer {
				if k++; e.AnswerNum != k {
					t.Errorf("%s/%s step %d is answer %d; want %d", id, agent, e.Step, e.AnswerNum, k)
				}
			}
		}
	}
	finished := 0
	for i, e := range l.Session {
		if e.Seq != i+1 {
			t.Errorf("%s: session entry %d has seq %d", id, i, e.Seq)
		}
		if e.Kind == coordination.SessionFinished {
			finished++
			if e.Result == nil || e.Result.Winner == nil {
				t.Errorf("%s: the finished entry names no winner: %+v", id, e.Result)
			}
		}
	}
	if finished != 1 {
		t.Errorf("%s: %d finished entries, want 1", id, finished)
	}
}

// TestPostgresReplicasServeEachOthersSessions: a team runs on A; B answers
// for it — team_status on B follows A's steps, run_team{session_id} on B
// waits for A's run to the end, and cancel_team on B stops a run on A.
//
// Its bounds are on what the replicas do, not on how soon this test's own
// calls come back. With the race-built test on two cores at a load of 20,
// it failed 5 runs of 5 with "A's run stopped 1.0-1.6 s after cancel_team
// on B", timed from the test's ask to its poll seeing the run let go: B
// took up to 0.8 s to answer the test and record the cancel, the poll saw
// A's release up to 0.4 s after A made it, and A itself stopped its calls
// 0.05-0.44 s after the cancel was recorded. One team_status round trip
// took 1.2 s, its answer already showing the step.
func TestPostgresReplicasServeEachOthersSessions(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)

	a := startServer(t, bin, t.TempDir(), "--store", dsn)
	b := startServer(t, bin, t.TempDir(), "--store", dsn, "--rate", "-1")
	ca, cb := connect(t, a.url, nil), connect(t, b.url, nil)
	defer ca.Close()
	defer cb.Close()

	const id = "pg_joined"
	if res, err := callTool(ctx, ca, "run_team", joinedTeam(id, false)); err != nil || res.IsError {
		t.Fatalf("run_team on A: %v %s", err, resultText(res))
	}
	// run_team{session_id} on B joins A's run at once, on a client of its
	// own: a follower tells the steps that land after it joins
	// (Service.Follow). Joined after the team_status checks below, which
	// take seconds on a loaded machine, it came as A's last steps landed
	// and heard none of them (under a load of 20 here: 4 steps counted at
	// the join, 8 in the end, none told).
	cj := connect(t, b.url, nil)
	defer cj.Close()
	var heard progressLog
	heard.hear(cj)
	joining := make(chan joinedCall, 1)
	go func() {
		t0 := time.Now()
		res, err := callWithProgress(ctx, cj, "run_team", joinedTeam(id, true))
		joining <- joinedCall{res: res, err: err, took: time.Since(t0)}
	}()

	// team_status on B shows A's steps as they land: B reads the database,
	// so a call made once a step has landed shows it. Its lag is from the
	// landing to the start of the first call that shows the step — what a
	// client polling B each second waits beyond its own poll — not that
	// call's round trip, which is the machine's (logged as trip).
	var lag, trip time.Duration
	for seen := 0; seen < 3; {
		n := steps(ctx, st, id)
		if n <= seen {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		landed := time.Now()
		for {
			asked := time.Now()
			shown := statusSteps(ctx, t, cb, id)
			trip = max(trip, time.Since(asked))
			if shown >= n {
				lag = max(lag, asked.Sub(landed))
				break
			}
			if time.Since(landed) > 10*time.Second {
				t.Fatalf("team_status on B shows %d steps %v after step %d landed on A", shown, time.Since(landed).Round(time.Millisecond), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		seen = n
	}
	if lag > time.Second {
		t.Errorf("B's team_status first showed a step landed on A to a call made %v after the landing, want within 1s", lag)
	}
	j := <-joining
	if j.err != nil {
		t.Fatalf("run_team{session_id} on B after %v: %v", j.took, j.err)
	}
	if j.res.IsError {
		t.Fatalf("run_team{session_id} on B: %s", resultText(j.res))
	}
	var tr struct {
		Status string `json:"status"`
	}
	if err := structured(j.res, &tr); err != nil || tr.Status != coordination.StatusFinished {
		t.Fatalf("run_team{session_id, wait} on B = %q (%v), want finished: %s", tr.Status, err, resultText(j.res))
	}
	if l, err := st.ReadRun(ctx, id); err != nil || l == nil || l.PID != a.cmd.Process.Pid {
		t.Errorf("the run lease = %+v (%v), want A's: B should join A's run, not take it over", l, err)
	}
	checkStoredLedger(t, st, id)
	// The blocking call on B heard A's steps as they landed, and the end.
	stepsHeard := stepsTold(heard.all())
	if stepsHeard == 0 || len(heard.saying(" wins ")) == 0 {
		t.Errorf("run_team{session_id, wait} on B heard %d of A's steps and no end: %q", stepsHeard, heard.all())
	}
	if n := steps(ctx, st, id); stepsHeard > n {
		t.Errorf("run_team{session_id, wait} on B told %d steps of a run that landed %d: some twice: %q", stepsHeard, n, heard.all())
	}

	// cancel_team on B stops A's run, its model calls in flight included.
	// The team's calls last ten seconds and none has landed when B cancels:
	// were A to learn of the cancel only at its next landing (the cancel
	// fence), the run would go on for seconds more. Its calls stopped
	// within a second of B recording the cancel, it was B's NOTIFY, heard
	// by A's run loop, that cancelled them. Both ends are the replicas'
	// own stamps, the cancelled entry B wrote and the step leases A let go
	// (a released lease's renewed_at is its release), so neither B's
	// answer to this test nor this test's poll of the lease counts.
	const other = "pg_cancelled"
	if res, err := callTool(ctx, ca, "run_team", longCallTeam(other, 9)); err != nil || res.IsError {
		t.Fatalf("run_team on A: %v %s", err, resultText(res))
	}
	waitFor(t, 30*time.Second, "every agent's model call in flight on A", func() bool {
		l, err := st.ReadRun(ctx, other)
		return err == nil && l != nil && l.PID == a.cmd.Process.Pid && stepsStarted(ctx, st, other) == 4
	})
	asked := time.Now()
	if res, err := callTool(ctx, cb, "cancel_team", map[string]any{"session_id": other}); err != nil || res.IsError {
		t.Fatalf("cancel_team on B: %v %s", err, resultText(res))
	}
	waitFor(t, 5*time.Second, "A letting the cancelled run go", func() bool {
		l, err := st.ReadRun(ctx, other)
		return err == nil && l != nil && l.Released
	})
	seen := time.Since(asked)
	recorded := cancelRecorded(ctx, t, st, other)
	held, err := st.ReadSteps(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	var stoppedAt time.Time
	for agent, l := range held {
		switch {
		case l.Held(time.Now()):
			t.Errorf("%s's step lease is still held after A let the run go: its model call was not cancelled", agent)
		case l.Released && l.Renewed.After(stoppedAt):
			stoppedAt = l.Renewed
		}
	}
	if stoppedAt.IsZero() {
		t.Fatalf("A let none of the cancelled run's %d step leases go: %+v", len(held), held)
	}
	stopped := stoppedAt.Sub(recorded)
	if stopped > time.Second {
		t.Errorf("A's model calls stopped %v after B recorded the cancel, want within a second (they last 10s)", stopped)
	}
	for name, c := range map[string]*client.Client{"A": ca, "B": cb} {
		res, err := callTool(ctx, c, "team_status", map[string]any{"session_id": other})
		if err != nil || res.IsError {
			t.Fatalf("team_status on %s: %v %s", name, err, resultText(res))
		}
		var status struct {
			Result struct {
				Status string `json:"status"`
			} `json:"result"`
		}
		if err := structured(res, &status); err != nil || status.Result.Status != coordination.StatusCancelled {
			t.Errorf("team_status on %s after the cancel = %q (%v), want %s", name, status.Result.Status, err, coordination.StatusCancelled)
		}
	}
	if n := steps(ctx, st, other); n != 0 {
		t.Errorf("A recorded %d steps of the cancelled run; its calls should have been cut short", n)
	}
	t.Logf("B's team_status showed each of A's steps to the first call after it landed (lag %v, round trips up to %v); run_team on B, joined at once, waited A's run to the end, its progress telling %d of A's %d steps; A's calls stopped %v after B recorded the cancel (this test saw the run let go %v after asking B)",
		lag.Round(time.Millisecond), trip.Round(time.Millisecond), stepsHeard, steps(ctx, st, id), stopped.Round(time.Millisecond), seen.Round(time.Millisecond))
}

// joinedTeam is the team A runs and B joins: slowTeam's agents with steps
// of about two seconds, so A's run has steps still to land for seconds
// after B's join is sent, however long B takes to take it up on a loaded
// machine; wait is run_team's.
func joinedTeam(id string, wait bool) map[string]any {
	return map[string]any{
		"session_id": id,
		"task":       "What is 17 * 23?",
		"models": []string{
			"sim/strong:latency=1400ms:seed=5", "sim:latency=2s:seed=6",
			"sim:accuracy=0.5:latency=1600ms:seed=7", "sim/strong:latency=1800ms:seed=8",
		},
		"wait": wait,
	}
}

// joinedCall is what a run_team{session_id, wait} sent in the background
// came back with, and after how long.
type joinedCall struct {
	res  *mcpgo.CallToolResult
	err  error
	took time.Duration
}

// stepsTold is how many of msgs, a run's progress, tell a step landing: an
// answer or a vote, not the heartbeat that repeats the last of them
// ("still working (10s); last: … voted for …").
func stepsTold(msgs []string) int {
	n := 0
	for _, m := range msgs {
		if !strings.HasPrefix(m, "still working") && (strings.Contains(m, " answered ") || strings.Contains(m, " voted for ")) {
			n++
		}
	}
	return n
}

// statusSteps is how many steps team_status on c shows for the session.
func statusSteps(ctx context.Context, t *testing.T, c *client.Client, id string) int {
	t.Helper()
	res, err := callTool(ctx, c, "team_status", map[string]any{"session_id": id})
	if err != nil {
		t.Fatalf("team_status: %v", err)
	}
	if res.IsError {
		t.Fatalf("team_status: %s", resultText(res))
	}
	var status struct {
		Agents []struct {
			Steps int `json:"steps"`
		} `json:"agents"`
	}
	if err := structured(res, &status); err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, a := range status.Agents {
		shown += a.Steps
	}
	return shown
}

// cancelRecorded is when the session's last cancel was recorded, as the
// replica that recorded it stamped its entry.
func cancelRecorded(ctx context.Context, t *testing.T, st coordination.Store, id string) time.Time {
	t.Helper()
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(l.Session) - 1; i >= 0; i-- {
		if e := l.Session[i]; e.Kind == coordination.SessionCancelled {
			return e.Time
		}
	}
	t.Fatalf("%s has no cancelled entry: %+v", id, l.Session)
	return time.Time{}
}

// TestPostgresReplicasTakeTurnsSteppingOneSession: a step-driven session
// started on A is stepped through A and B in turn, each call on the other
// replica, to its end; the ledger comes out whole.
func TestPostgresReplicasTakeTurnsSteppingOneSession(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)
	a := startServer(t, bin, t.TempDir(), "--store", dsn, "--rate", "-1")
	b := startServer(t, bin, t.TempDir(), "--store", dsn, "--rate", "-1")
	ca, cb := connect(t, a.url, nil), connect(t, b.url, nil)
	defer ca.Close()
	defer cb.Close()
	res, err := callTool(ctx, ca, "start_team", map[string]any{
		"task":   "What is 17 * 23?",
		"models": []string{"sim/strong:latency=5ms:seed=1", "sim:latency=5ms:seed=2", "sim/strong:latency=5ms:seed=3"},
	})
	if err != nil || res.IsError {
		t.Fatalf("start_team on A: %v %s", err, resultText(res))
	}
	var cur struct {
		SessionID  string   `json:"session_id"`
		Status     string   `json:"status"`
		NextAgents []string `json:"next_agents"`
	}
	if err := structured(res, &cur); err != nil {
		t.Fatal(err)
	}
	id := cur.SessionID
	// Every agent of a new team is due (the result's text names them).
	cur.NextAgents = []string{"agent_a", "agent_b", "agent_c"}
	clients := map[int]string{0: "A", 1: "B"}
	calls := 0
	next := []string{"agent_a", "agent_b", "agent_c"} // every agent of a new team is due
	for round := 0; len(next) > 0; round++ {
		if round > 40 {
			t.Fatalf("the session still names agents to step after %d rounds", round)
		}
		var after []string
		for _, agent := range next {
			c := ca
			if calls%2 == 1 {
				c = cb
			}
			res, err := callTool(ctx, c, "step", map[string]any{"session_id": id, "agent_id": agent})
			if err != nil || res.IsError {
				t.Fatalf("step %s on %s (call %d): %v %s", agent, clients[calls%2], calls, err, resultText(res))
			}
			calls++
			var sr struct {
				NextAgents []string `json:"next_agents"`
				Finished   bool     `json:"finished"`
			}
			if err := structured(res, &sr); err != nil {
				t.Fatal(err)
			}
			after = sr.NextAgents
			if sr.Finished {
				after = nil
				break
			}
		}
		next = after
	}
	if !finishedIn(ctx, st, id) {
		res, err := callTool(ctx, cb, "finalize_team", map[string]any{"session_id": id})
		if err != nil || res.IsError {
			t.Fatalf("finalize_team on B: %v %s", err, resultText(res))
		}
	}
	if !finishedIn(ctx, st, id) {
		t.Fatal("the session did not finish")
	}
	checkStoredLedger(t, st, id)
	t.Logf("%d step calls alternating between A and B finished the session", calls)
}

// longCallTeam is a four-agent sim team whose every model call lasts ten
// seconds: a run cancelled mid-call stops within a second only if its
// calls are cancelled, not waited for.
func longCallTeam(id string, seed int) map[string]any {
	models := make([]string, 4)
	for i := range models {
		models[i] = fmt.Sprintf("sim:latency=10s:seed=%d", seed+i)
	}
	return map[string]any{"session_id": id, "task": "What is 17 * 23?", "models": models, "wait": false}
}

// stepsStarted is how many steps of the session were launched (their
// step_started events), landed or not.
func stepsStarted(ctx context.Context, st coordination.EventSource, id string) int {
	evs, err := st.Events(ctx, id)
	if err != nil {
		return 0
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == "step_started" {
			n++
		}
	}
	return n
}

// pgTenant opens a tenant of the database at dsn for a test's own reads
// and writes beside the servers under test, closed when the test ends.
func pgTenant(t *testing.T, dsn, tenant string) *pgstore.Store {
	t.Helper()
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := db.For(tenant)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*pgstore.Store)
}
