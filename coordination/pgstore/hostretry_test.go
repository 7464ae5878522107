package pgstore

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// cutReplica is a whole replica on dsn whose connection is cut once, right
// after the first write holding mark has committed (committed tells when),
// as when the network fails at the commit.
func cutReplica(t *testing.T, dsn, mark string, committed func() bool) *Store {
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
	return replicaOn(t, dsn, Options{dial: dial})
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
	cut := cutReplica(t, dsn, content, func() bool { return rows(t, a, "entries") > 0 })
	ctx := context.Background()
	other := coordination.NewService(a, coordination.Options{})
	svc := coordination.NewService(cut, coordination.Options{})
	s, err := other.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", SessionID: "s", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "me", Model: "host"}, {ID: "you", Model: "host"}}})
	if err != nil {
		t.Fatal(err)
	}
	view, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := svc.Subscribe(ctx, coordination.Filter{Sessions: []string{s.ID}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// The cancel goes in while the landing waits to try again: the outage
	// is told before the wait (200 ms), with the session lock let go.
	cancelled := make(chan error, 1)
	go func() {
		for range sub.Ready() {
			for _, o := range sub.Take() {
				if o.Progress != nil && o.Progress.Kind == coordination.ProgressStoreOutage {
					_, err := other.Cancel(ctx, s.ID)
					cancelled <- err
					return
				}
			}
		}
	}()
	req := coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "new_answer", Content: content, SeenSteps: view.SeenSteps}
	res, err := svc.Step(ctx, req)
	select {
	case cerr := <-cancelled:
		if cerr != nil {
			t.Fatalf("the cancel between the attempts: %v", cerr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the landing never reported the store unreachable, so nothing was retried: the test tests nothing")
	}
	if err != nil {
		t.Fatalf("the submit whose landing committed before the cancel: %v; want the step it recorded", err)
	}
	if res.Action != "new_answer" || res.Label == "" {
		t.Fatalf("the submit returned %s %q; want the answer it recorded, labelled", res.Action, res.Label)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Fatalf("%d entries stored; want the one", n)
	}
	again, err := svc.Step(ctx, req)
	if err != nil || again.Label != res.Label {
		t.Fatalf("the same submission again = %+v, %v; want %q replayed", again, err, res.Label)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Fatalf("%d entries stored after the resubmission; want the one", n)
	}
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
	cut := cutReplica(t, dsn, `"landed_step":1`, marked)
	ctx := context.Background()
	svc := coordination.NewService(cut, coordination.Options{})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", SessionID: "s", Driver: coordination.DriverStep,
		Agents: []coordination.Agent{{ID: "me", Model: "host"}, {ID: "you", Model: "host"}}})
	if err != nil {
		t.Fatal(err)
	}
	view, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	req := coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "new_answer", Content: "4", SeenSteps: view.SeenSteps}
	res, err := svc.Step(ctx, req)
	if !marked() {
		t.Fatal("the view was never marked, so the cut never fired: the test tests nothing")
	}
	if err != nil {
		t.Fatalf("the submit whose view mark was lost at its commit: %v; want the step it recorded", err)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Fatalf("%d entries stored; want the one", n)
	}
	again, err := svc.Step(ctx, req)
	if err != nil || again.Label != res.Label {
		t.Fatalf("the same submission again = %+v, %v; want %q replayed", again, err, res.Label)
	}
	if n := rows(t, a, "entries"); n != 1 {
		t.Fatalf("%d entries stored after the resubmission; want the one", n)
	}
}
