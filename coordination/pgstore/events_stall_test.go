package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// pauseOn is a tracer that holds the first query whose SQL starts with
// prefix until release is closed, and says when it is held.
type pauseOn struct {
	RoundTrips
	prefix  string
	held    chan struct{}
	release chan struct{}
}

func (p *pauseOn) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(strings.TrimSpace(d.SQL), p.prefix) {
		select {
		case <-p.held:
		default:
			close(p.held)
			<-p.release
		}
	}
	return p.RoundTrips.TraceQueryStart(ctx, c, d)
}

// TestCriteriaBeingSetHoldUpNoEvents: SetCriteria holds its session's row
// while it rewrites the setup; the events of that session and of every
// other, written in one group, must not wait for it (an event's insert
// takes KEY SHARE on its session through the foreign key, which a FOR
// UPDATE would refuse until the setter commits: the replica's whole
// timeline stalled behind one slow SetCriteria).
func TestCriteriaBeingSetHoldUpNoEvents(t *testing.T) {
	dsn := pgtest.Schema(t)
	p := &pauseOn{prefix: "UPDATE sessions SET setup", held: make(chan struct{}), release: make(chan struct{})}
	setter := replicaOn(t, dsn, Options{Tracer: p})
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	for _, id := range []string{"x", "y"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	set := make(chan error, 1)
	go func() { set <- setter.SetCriteria(ctx, "x", []criteria.Item{{ID: "E1", Text: "correct"}}) }()
	<-p.held // the setter's transaction holds x's row, its UPDATE not yet sent
	release := sync.OnceFunc(func() { close(p.release) })
	defer release()
	wrote := make(chan error, 2)
	for _, id := range []string{"x", "y"} {
		go func() {
			wrote <- a.AppendEvent(ctx, id, coordination.Event{Type: "note", Message: "while criteria are set"})
		}()
	}
	for range 2 {
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("an event waited on a session row SetCriteria holds")
		}
	}
	release()
	if err := <-set; err != nil {
		t.Fatal(err)
	}
}

// TestAGroupWriteThatPanicsLeavesNobodyWaiting: a write that panics (a
// tracer's, say, under a server that recovers panics) answers the other
// calls of its group, hands the lead on, and the next write goes ahead.
func TestAGroupWriteThatPanicsLeavesNobodyWaiting(t *testing.T) {
	var g group[int]
	ok := func(vs []int) []error { return make([]error, len(vs)) }
	started, unblock := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- g.do(context.Background(), 1, func(vs []int) []error {
			close(started)
			<-unblock
			return ok(vs)
		})
	}()
	<-started
	// Two calls gather behind the first write; the first of them leads
	// the next group, and its write panics.
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_ = g.do(context.Background(), 2, func([]int) []error { panic("boom") })
	}()
	for g.waiting() < 1 {
		time.Sleep(time.Millisecond)
	}
	follower := make(chan error, 1)
	go func() { follower <- g.do(context.Background(), 3, ok) }()
	for g.waiting() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(unblock)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if r := <-panicked; r != "boom" {
		t.Errorf("the leader's panic = %v, want it to reach the leader's caller", r)
	}
	select {
	case err := <-follower:
		if !errors.Is(err, errGroupWritePanicked) {
			t.Errorf("the other call of a group whose write panicked got %v, want errGroupWritePanicked", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other call of a group whose write panicked waited for ever")
	}
	done := make(chan error, 1)
	go func() { done <- g.do(context.Background(), 4, ok) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write after the panic never ran: the lead was not given up")
	}
}

// TestAGroupAnswersEachTenantsSessionsApart: in one group (one round trip,
// nothing refused by PostgreSQL), an event of a session its tenant lacks
// fails alone with ErrSessionNotFound, even when another tenant has a
// session of that id, and every other event is written to its own
// tenant's session.
func TestAGroupAnswersEachTenantsSessionsApart(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &RoundTrips{}
	a := countedReplica(t, dsn, c)
	other, err := a.db.For("other")
	if err != nil {
		t.Fatal(err)
	}
	b := other.(*Store)
	ctx := context.Background()
	for _, id := range []string{"lead", "s"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Create(ctx, storetest.NewSession("t")); err != nil {
		t.Fatal(err)
	}
	release := holdTable(t, dsn, "events")
	before := c.Count()
	lead := leadHeld(t, a, c, "lead")
	type call struct {
		st      *Store
		id      string
		missing bool
	}
	calls := []call{{a, "s", false}, {b, "s", true}, {b, "t", false}, {a, "t", true}, {a, "nowhere", true}}
	answers := make([]chan error, len(calls))
	for i, cl := range calls {
		answers[i] = make(chan error, 1)
		go func() { answers[i] <- cl.st.AppendEvent(ctx, cl.id, coordination.Event{Type: "note", Step: i}) }()
		await(t, "the event queued", func() bool { return a.db.events.waiting() == i+1 })
	}
	release()
	if err := <-lead; err != nil {
		t.Fatal(err)
	}
	for i, cl := range calls {
		err := <-answers[i]
		if cl.missing != errors.Is(err, coordination.ErrSessionNotFound) || (!cl.missing && err != nil) {
			t.Errorf("tenant %s, session %s: %v; want missing=%v", cl.st.tenant, cl.id, err, cl.missing)
		}
	}
	if n := c.Count() - before; n != 2 {
		t.Errorf("%d round trips, want 2: the group was not written in one", n)
	}
	for _, want := range []struct {
		st *Store
		id string
		n  int
	}{{a, "s", 1}, {b, "t", 1}, {a, "lead", 1}} {
		evs, err := want.st.Events(ctx, want.id)
		if err != nil || len(evs) != want.n {
			t.Errorf("tenant %s, session %s has %d events (%v), want %d", want.st.tenant, want.id, len(evs), err, want.n)
		}
	}
}

// TestASessionBeingDeletedHoldsUpNoOtherEvents: a prune's delete holds its
// session's row FOR UPDATE until it commits; an event of that session
// written in the same group as another session's must not hold the group
// (the replica's whole timeline, every tenant's) until the delete ends. It
// is answered as of a session not stored, which the delete makes it.
func TestASessionBeingDeletedHoldsUpNoOtherEvents(t *testing.T) {
	dsn := pgtest.Schema(t)
	p := &pauseOn{prefix: "DELETE FROM tool_records", held: make(chan struct{}), release: make(chan struct{})}
	pruner := replicaOn(t, dsn, Options{Tracer: p})
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	for _, id := range []string{"gone", "kept"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	deleted := make(chan error, 1)
	go func() { deleted <- pruner.DeleteSession(ctx, "gone") }()
	<-p.held // the delete's transaction holds gone's row FOR UPDATE
	release := sync.OnceFunc(func() { close(p.release) })
	defer release()
	wrote := map[string]chan error{"gone": make(chan error, 1), "kept": make(chan error, 1)}
	for id, ch := range wrote {
		go func() {
			ch <- a.AppendEvent(ctx, id, coordination.Event{Type: "note", Message: "while gone is deleted"})
		}()
	}
	for id, ch := range wrote {
		select {
		case err := <-ch:
			if id == "kept" && err != nil {
				t.Fatalf("kept's event: %v", err)
			}
			if id == "gone" && !errors.Is(err, coordination.ErrSessionNotFound) {
				t.Fatalf("the event of the session being deleted: %v, want ErrSessionNotFound", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s's event waited on the row a delete holds", id)
		}
	}
	release()
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if evs, err := a.Events(ctx, "kept"); err != nil || len(evs) != 1 {
		t.Fatalf("kept's timeline: %d events, %v; want its one", len(evs), err)
	}
	if _, err := a.Events(ctx, "gone"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("the deleted session's timeline: %v, want ErrSessionNotFound", err)
	}
}
