package pgstore

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestLendStateIsOneRoundTrip: a derivation's ledger and the step locks
// held come in one round trip, the locks as InFlight tells them (a held
// lock is an unexpired row), read afresh each time, and the map is the
// caller's.
func TestLendStateIsOneRoundTrip(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	landStep(t, a, "s", "agent_a", "first")
	if _, _, _, err := a.LendState(ctx, "s"); err != nil { // the setup is read once
		t.Fatal(err)
	}
	lock, err := a.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	before := c.Count()
	l, held, _, err := a.LendState(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("LendState took %d round trips, want 1", n)
	}
	if want := map[string]bool{"agent_b": true}; !maps.Equal(held, want) {
		t.Errorf("in flight %v, want %v", held, want)
	}
	if es := l.Agents["agent_a"]; len(es) != 1 || es[0].Content != "first" {
		t.Errorf("agent_a's entries %+v; want its first step", es)
	}
	delete(held, "agent_b") // the caller's map: the next loan still says so
	landStep(t, a, "s", "agent_a", "second")
	before = c.Count()
	l, held, _, err = a.LendState(ctx, "s")
	if err != nil || !held["agent_b"] || len(l.Agents["agent_a"]) != 2 {
		t.Errorf("after a landing: %d entries of agent_a, in flight %v, %v; want 2 and agent_b", len(l.Agents["agent_a"]), held, err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("LendState with a new entry took %d round trips, want 1", n)
	}
	expireLock(t, a, "s", "step:agent_b") // its holder gone quiet: no longer in flight
	if _, held, _, err = a.LendState(ctx, "s"); err != nil || len(held) != 0 {
		t.Errorf("in flight past the lock's expiry: %v, %v; want none", held, err)
	}
	inFlight, err := a.InFlight(ctx, "s")
	if err != nil || !maps.Equal(inFlight, held) {
		t.Errorf("InFlight says %v (%v) where LendState says %v", inFlight, err, held)
	}
	// A criteria call's hold on the session's budget comes in the same
	// round trip, and one past its expiry does not.
	if _, err := a.HoldSpend(ctx, "s", "hold:live", 0.25, 900, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.HoldSpend(ctx, "s", "hold:dead", 0.5, 1800, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	before = c.Count()
	_, _, holds, err := a.LendState(ctx, "s")
	if want := []coordination.SpendHold{{Key: "hold:live", Cost: 0.25, Tokens: 900}}; err != nil || !slices.Equal(holds, want) {
		t.Errorf("LendState with a live and an expired hold: holds %+v, %v; want %+v", holds, err, want)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("LendState with holds took %d round trips, want 1", n)
	}
	before = c.Count()
	if _, _, _, err := a.LendState(ctx, "missing"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("LendState of a missing session = %v, want ErrSessionNotFound", err)
	}
	if n := c.Count() - before; n != 1 {
		t.Errorf("LendState of a missing session took %d round trips, want 1", n)
	}
}

// TestALoanSharedWithAStateCallReadsTheLocks: a LendState waiting behind a
// LendLedger does not take the locks from a read that did not ask for them.
func TestALoanSharedWithAStateCallReadsTheLocks(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	lock, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := a.LendLedger(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	ln := a.db.loans.get(a.tenant, "s")
	if ln.held != nil {
		t.Fatalf("a LendLedger kept locks %v it did not read", ln.held)
	}
	if _, held, _, err := a.LendState(ctx, "s"); err != nil || !held["agent_a"] {
		t.Errorf("LendState after a LendLedger: in flight %v, %v; want agent_a", held, err)
	}
}

// TestARunsStepReadsItsSessionInThreeRoundTrips: a run's step derives its
// session three times (under its step lock, before it lands, after), and
// none of them sends the step locks' query alone: each read is one round
// trip, the loan's. The run itself reads a few times more (its start, its
// end).
func TestARunsStepReadsItsSessionInThreeRoundTrips(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	seed := int64(7)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim", "sim", "sim"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	loans0, inFlight0 := sessionReads(c)
	setups0 := setupReads(c)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	loans, inFlight := sessionReads(c)
	loans, inFlight = loans-loans0, inFlight-inFlight0
	// The setup: at the run's start (kept from then on); its end derives
	// from the setup the run holds (TestRunsReadTheirSetupsOnceEach).
	if n := setupReads(c) - setups0; n != 1 {
		t.Errorf("the run read its setup %d times, want 1", n)
	}
	if inFlight != 0 {
		t.Errorf("the run sent the step locks' query alone %d times; they come with the loans", inFlight)
	}
	// Four for the run, and one more each time the run's watch hears a
	// session entry (its own re-vote or end): a few.
	if most := int64(3*res.Steps + 6); loans+inFlight > most {
		t.Errorf("%d steps read the session in %d round trips, want at most %d (three a step, a few for the run)", res.Steps, loans+inFlight, most)
	}
	t.Logf("%d steps: %d loans, %d in-flight reads alone", res.Steps, loans, inFlight)

	setups0 = setupReads(c)
	if _, err := svc.Inspect(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if n := setupReads(c) - setups0; n != 1 {
		t.Errorf("inspecting the ended session read its setup %d times, want once (after the ledger)", n)
	}
}

// sessionReads is how many loans, and how many reads of the step locks
// alone, c has counted.
func sessionReads(c *QueryCounts) (loans, inFlight int64) {
	for _, q := range c.Top(1000, 30) {
		switch {
		case strings.HasPrefix(q.Kind, "[SELECT r.i, s.created_at,"):
			loans += q.Count
		case strings.HasPrefix(q.Kind, "SELECT substr(l.name, 6)"):
			inFlight += q.Count
		}
	}
	return loans, inFlight
}

// setupReads is how many times c has counted a session's setup read.
func setupReads(c *QueryCounts) (n int64) {
	for _, q := range c.Top(1000, 30) {
		if strings.HasPrefix(q.Kind, "SELECT setup, ready_at FROM") {
			n += q.Count
		}
	}
	return n
}
