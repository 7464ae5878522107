package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// holdFirst counts the round trips whose SQL (a batch's first query's)
// begins with prefix, and holds the first one sent once armed on the wire
// until released: the calls made meanwhile wait for the next.
type holdFirst struct {
	RoundTrips
	prefix  string
	seen    atomic.Int64
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{} // a token lets the held one go
}

func newHoldFirst(prefix string) *holdFirst {
	return &holdFirst{prefix: prefix, entered: make(chan struct{}, 1), release: make(chan struct{}, 1)}
}

func (h *holdFirst) hold(sql string) {
	if strings.HasPrefix(sql, h.prefix) {
		h.seen.Add(1)
		if h.armed.CompareAndSwap(true, false) {
			h.entered <- struct{}{}
			<-h.release
		}
	}
}

func (h *holdFirst) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	h.hold(d.SQL)
	return h.RoundTrips.TraceQueryStart(ctx, conn, d)
}

func (h *holdFirst) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if d.Batch != nil && len(d.Batch.QueuedQueries) > 0 {
		q := d.Batch.QueuedQueries
		// A batch that keeps its plans says so first (keepGenericPlans):
		// what it reads begins after.
		if len(q) > 1 && q[0].SQL == keepGenericPlans {
			q = q[1:]
		}
		h.hold(q[0].SQL)
	}
	return h.RoundTrips.TraceBatchStart(ctx, conn, d)
}

// loanPrefix begins the SQL of a loans' read.
const loanPrefix = "SELECT r.i, s.created_at"

// TestLoansOfManySessionsGoTogether: loans of different sessions asked for
// while one is on the wire are one read after it, and each is what its
// session's whole read gives: steps, session entries and held step locks
// land in their own session's loan; a session not stored fails alone, as
// does one with a row that does not decode; the others are lent.
func TestLoansOfManySessionsGoTogether(t *testing.T) {
	h := newHoldFirst(loanPrefix)
	a := countedReplica(t, pgtest.Schema(t), h)
	ctx := context.Background()
	ids := []string{"first", "steps", "entries", "locked", "damaged", "fresh"}
	for _, id := range ids {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Each session but "fresh" has a step of agent_a kept, so the grouped
	// read continues kept ledgers, their agents the same names ("fresh"
	// is read whole, its setup with it).
	for _, id := range ids[:5] {
		landStep(t, a, id, "agent_a", "kept")
		lend(t, a, id)
	}
	a.db.loanReads.readers = 1
	landStep(t, a, "steps", "agent_a", "an answer")
	landStep(t, a, "steps", "agent_b", "another")
	if _, err := a.AppendSession(ctx, "entries", coordination.SessionEntry{Kind: coordination.SessionRevote, Agents: []string{"agent_a"}}); err != nil {
		t.Fatal(err)
	}
	stepLock, err := a.LockStep(ctx, "locked", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	defer stepLock.Release()
	if _, err := a.db.pool.Exec(ctx, `INSERT INTO entries (tenant, session_id, agent_id, step, kind, at, entry)
		VALUES ($1, 'damaged', 'agent_a', 2, 'answer', now(), '{"step": "two"}')`, a.tenant); err != nil {
		t.Fatal(err)
	}

	h.armed.Store(true)
	firstDone := make(chan error, 1)
	go func() {
		_, err := a.LendLedger(ctx, "first")
		firstDone <- err
	}()
	<-h.entered
	before := h.seen.Load()
	type lent struct {
		id   string
		l    *coordination.Ledger
		held map[string]bool
		err  error
	}
	results := make(chan lent, len(ids))
	for _, id := range append(ids[1:], "missing") {
		go func() {
			l, held, _, err := a.LendState(ctx, id)
			results <- lent{id, l, held, err}
		}()
	}
	await(t, "the loans waiting for the next read", func() bool { return a.db.loanReads.waiting() == len(ids) })
	h.release <- struct{}{}
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	for range len(ids) {
		r := <-results
		switch r.id {
		case "missing":
			if !errors.Is(r.err, coordination.ErrSessionNotFound) {
				t.Errorf("the loan of a session not stored, grouped with others: %v, want ErrSessionNotFound", r.err)
			}
		case "damaged":
			if r.err == nil || !strings.Contains(r.err.Error(), "damaged") {
				t.Errorf("the loan of a session with a row that does not decode: %v, want it called damaged", r.err)
			}
		default:
			if r.err != nil {
				t.Errorf("the loan of %q, grouped with a missing and a damaged session: %v", r.id, r.err)
				continue
			}
			sameLedger(t, a, r.id, r.l)
			want := map[string]bool{}
			if r.id == "locked" {
				want["agent_b"] = true
			}
			if len(r.held) != len(want) || r.held["agent_b"] != want["agent_b"] {
				t.Errorf("the held step locks of %q read together with others: %v, want %v", r.id, r.held, want)
			}
		}
	}
	if n := h.seen.Load() - before; n != 1 {
		t.Errorf("%d loans asked for during a read took %d reads, want 1", len(ids), n)
	}
}

// TestALoanGivingUpLeavesTheOthersInItsRead: a caller whose deadline ends
// while the read it shares with another loan is on the wire gives up
// alone; the read goes on for the other loan, which is lent whole.
func TestALoanGivingUpLeavesTheOthersInItsRead(t *testing.T) {
	h := newHoldFirst(loanPrefix)
	a := countedReplica(t, pgtest.Schema(t), h)
	a.db.loanReads.readers = 1
	ctx := context.Background()
	for _, id := range []string{"first", "patient", "hasty"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	landStep(t, a, "patient", "agent_a", "an answer")
	h.armed.Store(true)
	first := make(chan error, 1)
	go func() {
		_, err := a.LendLedger(ctx, "first")
		first <- err
	}()
	<-h.entered // first's read is held on the wire
	hastyCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	hasty := make(chan error, 1)
	go func() {
		_, err := a.LendLedger(hastyCtx, "hasty")
		hasty <- err
	}()
	patient := make(chan error, 1)
	go func() {
		l, err := a.LendLedger(ctx, "patient")
		if err == nil && len(l.Agents["agent_a"]) != 1 {
			err = errors.New("lent without its step")
		}
		patient <- err
	}()
	await(t, "hasty and patient waiting for the next read", func() bool { return a.db.loanReads.waiting() == 2 })
	h.armed.Store(true) // their read is held too
	h.release <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-h.entered
	cancel()
	if err := <-hasty; !errors.Is(err, context.Canceled) {
		t.Fatalf("a loan whose context ended while its read was held: %v, want context.Canceled", err)
	}
	h.release <- struct{}{}
	if err := <-patient; err != nil {
		t.Fatalf("the loan read together with one that gave up: %v; its read must go on", err)
	}
}
