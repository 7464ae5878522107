package coordination_test

import (
	"context"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// readCounts is how a service read sessions' ledgers and step locks: the
// reads a database store makes a round trip each.
type readCounts struct {
	Loans, States, InFlights, Ledgers int
	Setups                            int // not in Total: counted apart
}

// Total is every read, each a round trip to a database.
func (c readCounts) Total() int { return c.Loans + c.States + c.InFlights + c.Ledgers }

// countingLender is a memory store that counts the service's reads and
// lends the step locks with the ledger (coordination.StateLender), as the
// PostgreSQL store does in one round trip.
type countingLender struct {
	*memstore.Store
	mu sync.Mutex
	n  readCounts
}

func (c *countingLender) count(f func(*readCounts)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.n)
}

func (c *countingLender) counts() readCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *countingLender) LendLedger(ctx context.Context, id string) (*coordination.Ledger, error) {
	c.count(func(n *readCounts) { n.Loans++ })
	return c.Store.LendLedger(ctx, id)
}

func (c *countingLender) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	c.count(func(n *readCounts) { n.Ledgers++ })
	return c.Store.Ledger(ctx, id)
}

func (c *countingLender) Session(ctx context.Context, id string) (*coordination.Session, error) {
	c.count(func(n *readCounts) { n.Setups++ })
	return c.Store.Session(ctx, id)
}

func (c *countingLender) InFlight(ctx context.Context, id string) (map[string]bool, error) {
	c.count(func(n *readCounts) { n.InFlights++ })
	return c.Store.InFlight(ctx, id)
}

// LendState reads the step locks before the ledger, as the PostgreSQL
// store's one statement does; the memory store shares no holds.
func (c *countingLender) LendState(ctx context.Context, id string) (*coordination.Ledger, map[string]bool, []coordination.SpendHold, error) {
	c.count(func(n *readCounts) { n.States++ })
	held, err := c.Store.InFlight(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	l, err := c.Store.LendLedger(ctx, id)
	return l, held, nil, err
}

var _ coordination.StateLender = (*countingLender)(nil)

// TestAServerStepReadsTheSessionThreeTimes: a run's step reads its session
// three times, each after the lock that makes it fresh, and each with the
// step locks when it derives: once under its step lock (is it due, what
// does it see), once under the session lock before it lands (a cancel since
// it began fences it) and once after it landed, under that lock, to decide.
// A derivation asks a StateLender for the ledger and the step locks in one
// read, never one read each.
func TestAServerStepReadsTheSessionThreeTimes(t *testing.T) {
	st := &countingLender{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Parallel: 1})
	ctx := context.Background()
	seed := int64(7)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim", "sim", "sim"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	// Settle the session's start (the first reads) before counting.
	if _, err := svc.Status(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	before := st.counts()
	res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.Agents[0].ID})
	if err != nil || res.Action == "error" {
		t.Fatalf("the step = %+v, %v", res, err)
	}
	step := diff(st.counts(), before)
	// Step: the state before the step lock (current), then the three.
	if step.InFlights != 0 || step.Ledgers != 0 || step.Total() != 4 {
		t.Errorf("a step call read %+v; want 4 reads (the state before its lock, then one under its step lock, one before and one after it lands) and no InFlight or Ledger alone", step)
	}

	before = st.counts()
	r, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := diff(st.counts(), before)
	steps := r.Steps - 1
	if run.InFlights != 0 {
		t.Errorf("the run read the step locks alone %d times; a StateLender lends them with the ledger", run.InFlights)
	}
	// Per step: three reads. Per run: four, at its start (the resume's
	// check under the session lock, the first state) and its end (the
	// finished entry just recorded, the state the loop ends on).
	if want := 3*steps + 4; run.Total() != want || run.Ledgers != 0 {
		t.Errorf("the run's %d steps read %+v (%d), want %d: three a step and four for the run", steps, run, run.Total(), want)
	}
	t.Logf("%d steps: %+v, %.2f reads a step", steps, run, float64(run.Total())/float64(steps))
}

func diff(a, b readCounts) readCounts {
	return readCounts{Loans: a.Loans - b.Loans, States: a.States - b.States, InFlights: a.InFlights - b.InFlights, Ledgers: a.Ledgers - b.Ledgers, Setups: a.Setups - b.Setups}
}

// TestASetupNotKeptIsReadOnceALoad: a derivation of a session whose setup
// the service does not keep (not stepped yet, ended, or let go) reads the
// setup once, after the ledger, so that one read is final once the ledger
// has an entry; a run reads it once, at its start.
func TestASetupNotKeptIsReadOnceALoad(t *testing.T) {
	st := &countingLender{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Parallel: 4})
	ctx := context.Background()
	seed := int64(7)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim", "sim", "sim", "sim"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	before := st.counts()
	if _, err := svc.Run(ctx, s.ID, nil); err != nil {
		t.Fatal(err)
	}
	// At its start (kept for the run from then on) only: its end, and a
	// step's result reaching the loop after that, derive from the setup
	// the run holds (final once a step landed). A setup not kept for the
	// run is read at every step instead.
	if n := diff(st.counts(), before).Setups; n != 1 {
		t.Errorf("the run read its setup %d times, want 1", n)
	}
	before = st.counts()
	v, err := svc.Inspect(ctx, s.ID)
	if err != nil || v.Result == nil || v.Result.Status != coordination.StatusFinished {
		t.Fatalf("inspect = %+v, %v; want finished", v, err)
	}
	if n := diff(st.counts(), before).Setups; n != 1 {
		t.Errorf("inspecting an ended session read its setup %d times, want 1", n)
	}
}
