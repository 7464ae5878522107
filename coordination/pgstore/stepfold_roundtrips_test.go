package pgstore

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A server step takes its step lock and claims its step lease back to back;
// the claim goes in the lock's round trip (coordination.StepLockWithLease),
// so a step's lock, lease and landing are two round trips, not three.

// TestAServerStepClaimsItsLeaseWithItsLock: a run's steps send their step
// lock's take once each and claim no step lease alone; the lease rows
// changed alone are the run lease's claim and release.
func TestAServerStepClaimsItsLeaseWithItsLock(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	_, steps := runSim(t, svc, c)
	takes, alone, landings := stepQueries(c)
	t.Logf("%d steps: %d step lock takes, %d lease rows changed alone, %d landings", steps, takes, alone, landings)
	if takes != int64(steps) || landings != int64(steps) {
		t.Errorf("%d steps took their step lock %d times and landed %d times; want once each a step", steps, takes, landings)
	}
	// The run's lease: its claim and its release.
	if alone > 2 {
		t.Errorf("%d steps changed a lease row alone %d times; want 2 (the run's claim and release), the steps' claims going with their locks", steps, alone)
	}
	if per := float64(takes+alone+landings) / float64(steps); per > 2+2/float64(steps) {
		t.Errorf("a step's lock, lease and landing took %.2f round trips, want 2", per)
	}
}

// stepQueries is how many step lock takes (with or without a claim of the
// step lease), lease rows changed alone (the known-row UPDATE, the
// unknown row's insert, or the locked path's two round trips, counted
// once) and leased landings c has counted.
func stepQueries(c *QueryCounts) (takes, alone, landings int64) {
	for _, q := range c.Top(1000, 1000) {
		switch {
		case strings.HasPrefix(q.Kind, "[WITH lockcfg") && strings.Contains(q.Kind, "max(step)"):
			takes += q.Count
		case strings.HasPrefix(q.Kind, "UPDATE leases SET owner_id") || strings.HasPrefix(q.Kind, "[BEGIN | SELECT agent_id") ||
			strings.HasPrefix(q.Kind, "[INSERT INTO leases"):
			alone += q.Count
		case strings.HasPrefix(q.Kind, "[BEGIN | SELECT massgen_hold_step(") && strings.Contains(q.Kind, "INSERT INTO usage"):
			landings += q.Count
		}
	}
	return takes, alone, landings
}

// TestAStepLockWithItsClaimSendsThreeStatements: the lock's batch is the
// take, the step's number and the claim; the claim's own statement sets
// synchronous_commit back for its write (a statement of its own before),
// which the database otherwise executes once more per step.
func TestAStepLockWithItsClaimSendsThreeStatements(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	runSim(t, svc, c)
	seen := 0
	for _, q := range c.Top(1000, 1000) {
		if !strings.HasPrefix(q.Kind, "[WITH lockcfg") || !strings.Contains(q.Kind, "max(step)") || !strings.Contains(q.Kind, "leases") {
			continue
		}
		seen++
		if n := strings.Count(q.Kind, " | ") + 1; n != 3 {
			t.Errorf("a step lock with its claim sent %d statements, want 3: %s", n, q.Kind)
		}
	}
	if seen == 0 {
		t.Fatal("no step lock was sent with its claim")
	}
}

// TestALeasedLandingHoldsItsFencesInOneStatement: a server step's landing
// holds the session's cancels, its step lease and its step lock with one
// statement (massgen_hold_step, migrations/0027_step_holds.sql), not one
// function call each: each statement the database starts, with its
// executor and its function's call, is CPU a step, and the database's
// CPU sets the wall at a thousand sessions on two cores.
func TestALeasedLandingHoldsItsFencesInOneStatement(t *testing.T) {
	c := &QueryCounts{}
	a := countedReplica(t, pgtest.Schema(t), c)
	svc := coordination.NewService(a, coordination.Options{Open: backends.Open, Parallel: 1})
	runSim(t, svc, c)
	seen := 0
	for _, q := range c.Top(1000, 1000) {
		if !strings.HasPrefix(q.Kind, "[BEGIN | SELECT massgen_hold_") || !strings.Contains(q.Kind, "INSERT INTO usage") {
			continue
		}
		seen++
		if n := strings.Count(q.Kind, "SELECT massgen_hold_"); n != 1 {
			t.Errorf("a landing sent %d fence statements, want 1: %s", n, q.Kind)
		}
		if !strings.Contains(q.Kind, "SELECT massgen_hold_step(") {
			t.Errorf("a server step's landing is not fenced by massgen_hold_step: %s", q.Kind)
		}
	}
	if seen == 0 {
		t.Fatal("no landing was sent")
	}
}
