package pgstore

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// cutReplica is a whole replica on dsn whose connection is cut once, right
// after the first write holding mark has committed (committed tells when),
// as when the network fails at the commit.
func cutReplica(t *testing.T, dsn, mark string, committed func() bool, tracer pgx.QueryTracer) *Store {
	t.Helper()
	armed := &atomic.Bool{}
	armed.Store(true)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutOnce{cutAfter: &cutAfter{Conn: c, mark: []byte(mark), committed: committed}, armed: armed}, nil
	}
	return replicaOn(t, dsn, Options{dial: dial, Tracer: tracer})
}

// sessionTakes times a replica's takes of session locks.
type sessionTakes struct {
	mu    sync.Mutex
	times []time.Time
}

func (s *sessionTakes) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if d.SQL == lockTake && len(d.Args) > 2 && d.Args[2] == "session" {
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
	}
	return ctx
}

func (*sessionTakes) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// after is the first take after t.
func (s *sessionTakes) after(t time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range s.times {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// onOutage runs do once svc tells of the store's outage in session id (a
// landing that found it unreachable, told before it waits to try again),
// and closes the channel it returns when do has run.
func onOutage(t *testing.T, svc *coordination.Service, id string, do func()) <-chan struct{} {
	t.Helper()
	sub, err := svc.Subscribe(context.Background(), coordination.Filter{Sessions: []string{id}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	done := make(chan struct{})
	go func() {
		for range sub.Ready() {
			for _, o := range sub.Take() {
				if o.Progress != nil && o.Progress.Kind == coordination.ProgressStoreOutage {
					do()
					close(done)
					return
				}
			}
		}
	}()
	return done
}

// landedOnce checks that session s holds one entry and that req, sent
// again, replays that step (labelled label, when one is given) and lands
// none.
func landedOnce(t *testing.T, a *Store, svc *coordination.Service, req coordination.StepRequest, label string) {
	t.Helper()
	if n := rows(t, a, "entries"); n != 1 {
		t.Fatalf("%d entries stored; want the one", n)
	}
	again, err := svc.Step(context.Background(), req)
	if err != nil || again.Action != req.Action || (label != "" && again.Label != label) {
		t.Fatalf("the same submission again = %+v, %v; want the step (%s %q) replayed", again, err, req.Action, label)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Fatalf("%d entries stored after the resubmission; want the one", n)
	}
}

// waitFor waits for done, failing with why after 10 s.
func waitFor(t *testing.T, done <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(why)
	}
}

// TestAHostSubmitLostAtItsCommitLandsOnceThoughACancelCameBetween: a host's
// submission through a replica whose connection is lost right after the
// landing committed is retried once the store answers (outage.go); a cancel
// recorded through another replica in between (the host's landing had
// already let the session lock go) does not turn the recorded step into a
// "cancelled mid-step" refusal: the submit returns the step it recorded,
// the ledger holds it once, and the view is marked, so the same submission
// again replays it rather than landing a second step.
func TestAHostSubmitLostAtItsCommitLandsOnceThoughACancelCameBetween(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	const content = "4, submitted once over a connection lost at its commit"
	takes := &sessionTakes{}
	cut := cutReplica(t, dsn, content, func() bool { return rows(t, a, "entries") > 0 }, takes)
	ctx := context.Background()
	other := coordination.NewService(a, coordination.Options{})
	svc := coordination.NewService(cut, coordination.Options{})
	s, req := coordtest.HostSubmission(t, other, svc, "s", content)
	// The cancel goes in while the landing waits to try again: the outage
	// is told before the wait (200 ms), with the session lock let go.
	var cerr error
	var cancelledAt time.Time
	cancelled := onOutage(t, svc, s.ID, func() {
		_, cerr = other.Cancel(ctx, s.ID)
		cancelledAt = time.Now()
	})
	res, err := svc.Step(ctx, req)
	waitFor(t, cancelled, "the landing never reported the store unreachable, so nothing was retried: the test tests nothing")
	if cerr != nil {
		t.Fatalf("the cancel between the attempts: %v", cerr)
	}
	// The retry's fence takes the session lock again: only if that was
	// after the cancel did the fence see it.
	if _, ok := takes.after(cancelledAt); !ok {
		t.Skipf("the cancel (done %s) came after the retry's fence: nothing was tested (submit: %v)", cancelledAt.Format(time.StampMicro), err)
	}
	if err != nil {
		t.Fatalf("the submit whose landing committed before the cancel: %v; want the step it recorded", err)
	}
	if res.Action != "new_answer" || res.Label == "" {
		t.Fatalf("the submit returned %s %q; want the answer it recorded, labelled", res.Action, res.Label)
	}
	landedOnce(t, a, svc, req, res.Label)
}

// TestAHostSubmitWhoseViewMarkWasLostAtItsCommitLandsOnce: the submission
// landed, and the write marking its view used committed but its answer was
// lost: the retry marks the view again rather than appending the recorded
// step a second time (refused as already recorded, which told the host its
// recorded step had failed and left the view unmarked).
func TestAHostSubmitWhoseViewMarkWasLostAtItsCommitLandsOnce(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	marked := func() bool {
		var n int
		if err := a.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM views WHERE tenant = $1 AND session_id = 's' AND view::jsonb ->> 'landed_step' = '1'`, a.tenant).Scan(&n); err != nil {
			t.Error(err)
			return true
		}
		return n > 0
	}
	cut := cutReplica(t, dsn, `"landed_step":1`, marked, nil)
	ctx := context.Background()
	svc := coordination.NewService(cut, coordination.Options{})
	_, req := coordtest.HostSubmission(t, svc, svc, "s", "4")
	res, err := svc.Step(ctx, req)
	if !marked() {
		t.Fatal("the view was never marked, so the cut never fired: the test tests nothing")
	}
	if err != nil {
		t.Fatalf("the submit whose view mark was lost at its commit: %v; want the step it recorded", err)
	}
	landedOnce(t, a, svc, req, res.Label)
}

// cutOnWrite loses its connection at the first write holding mark once
// armed: the statement never reaches the server.
type cutOnWrite struct {
	net.Conn
	mark  []byte
	armed *atomic.Bool
}

func (c *cutOnWrite) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.mark) && c.armed.CompareAndSwap(true, false) {
		c.Conn.Close()
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return c.Conn.Write(p)
}

// TestARetryWhoseStoredEntryReadFindsTheDatabaseGoneIsTriedAgain: a step
// whose append committed but whose answer was lost is retried; the retry's
// read of the stored entry (is it this landing?) finds the database gone
// again. That leaves the question open: the append fails as unreachable
// (tried again), not as a step another replica recorded, and the next try
// finds the entry.
func TestARetryWhoseStoredEntryReadFindsTheDatabaseGoneIsTriedAgain(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	const content = "landed, then read over a lost connection"
	first, second := &atomic.Bool{}, &atomic.Bool{}
	first.Store(true)
	landed := func() bool { return rows(t, a, "entries") > 0 }
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		read := &cutOnWrite{Conn: c, mark: []byte("SELECT entry::text FROM entries"), armed: second}
		return &cutOnce{cutAfter: &cutAfter{Conn: read, mark: []byte(content), committed: landed}, armed: first}, nil
	}
	cut := replicaOn(t, dsn, Options{dial: dial})
	l, err := cut.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	e := newAnswer("agent_a", content)
	e.Time = time.Now()
	if _, err := l.Append(ctx, e); !unavailable(err) {
		t.Fatalf("an append over a connection lost after its commit = %v; want the database unavailable", err)
	}
	if !landed() {
		t.Fatal("the cut append did not commit, which tests nothing")
	}
	second.Store(true)
	if _, err := l.Append(ctx, e); !unavailable(err) || errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("the retry whose stored-entry read lost its connection = %v; want the database unavailable, not a lost lease", err)
	}
	if second.Load() {
		t.Fatal("the retry never read the stored entry, which tests nothing")
	}
	got, err := l.Append(ctx, e)
	if err != nil {
		t.Fatalf("the next retry = %v; want its own stored entry found", err)
	}
	if got.Step != 1 || rows(t, a, "entries") != 1 {
		t.Errorf("the retry returned step %d with %d entries stored; want 1 and 1", got.Step, rows(t, a, "entries"))
	}
}

// TestAHostSubmitWhoseRequestEndsDuringTheOutageStillLandsOnce: the
// landing committed, its answer was lost, and the host's request ended
// while the landing waited to try again (its client gave up). The landing
// goes on, finds its entry and marks the view, so the same submission sent
// again replays that step instead of landing a second.
func TestAHostSubmitWhoseRequestEndsDuringTheOutageStillLandsOnce(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	const content = "4, from a client that gave up during the outage"
	cut := cutReplica(t, dsn, content, func() bool { return rows(t, a, "entries") > 0 }, nil)
	ctx := context.Background()
	svc := coordination.NewService(cut, coordination.Options{})
	s, req := coordtest.HostSubmission(t, svc, svc, "s", content)
	rctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	gaveUp := onOutage(t, svc, s.ID, giveUp)
	_, _ = svc.Step(rctx, req) // its client has gone: what it returns reaches nobody
	waitFor(t, gaveUp, "the landing never reported the store unreachable, so the request never ended during an outage: the test tests nothing")
	landedOnce(t, a, svc, req, "")
}
