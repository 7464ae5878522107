package coordination_test

import (
	"context"
	"errors"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// besideCancelStore is a store whose step locks fence a landing by the
// session's cancels in their write (an UncancelledLanding, as the
// PostgreSQL store's), and whose first such landing meets a cancel that a
// second holder of the session lock records just before it: after the
// service's own count under the lock, which cannot see it.
type besideCancelStore struct {
	*memstore.Store
	fenced []int // the cancels each fenced landing was given
}

type besideCancelLock struct {
	coordination.StepLock
	s         *besideCancelStore
	id, agent string
}

func (s *besideCancelStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.Store.LockStep(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	return besideCancelLock{StepLock: l, s: s, id: id, agent: agent}, nil
}

func (l besideCancelLock) AppendUncancelled(ctx context.Context, e coordination.Entry, cancels int) (coordination.Entry, error) {
	l.s.fenced = append(l.s.fenced, cancels)
	id := l.id
	if len(l.s.fenced) == 1 {
		if _, err := l.s.Store.AppendSession(ctx, id, coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "cancelled on another replica"}); err != nil {
			return coordination.Entry{}, err
		}
	}
	led, err := l.s.Store.Ledger(ctx, id)
	if err != nil {
		return coordination.Entry{}, err
	}
	n := 0
	for _, se := range led.Session {
		if se.Kind == coordination.SessionCancelled {
			n++
		}
	}
	if n > cancels {
		return coordination.Entry{}, coordination.CancelledMidStep(id, l.agent, l.Step())
	}
	return l.StepLock.Append(ctx, e)
}

// TestAHostsLandingIsFencedByTheCancelsInTheStoresWrite: a host's step
// lands through the store's own cancel fence where the store has one, with
// the count of cancels its step began with, so a cancel recorded beside it
// by a second holder of the session lock refuses it (nothing lands, the
// host is told to resume); resumed, the host's next submission lands.
func TestAHostsLandingIsFencedByTheCancelsInTheStoresWrite(t *testing.T) {
	ctx := context.Background()
	st := &besideCancelStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{})
	s, req := coordtest.HostSubmission(t, svc, svc, "", "4")
	if _, err := svc.Step(ctx, req); !errors.Is(err, coordination.ErrNotNext) {
		t.Fatalf("a host's submission beside a cancel recorded in the landing's write: %v; want refused as cancelled mid-step", err)
	}
	l, err := st.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Agents["me"]); n != 0 {
		t.Fatalf("%d host entries landed beside the cancel; want none", n)
	}
	// Stepping again resumes a step-driven session.
	view, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	req.SeenSteps = view.SeenSteps
	if _, err := svc.Step(ctx, req); err != nil {
		t.Fatalf("the host's submission after the resume: %v", err)
	}
	if want := []int{0, 1}; len(st.fenced) != 2 || st.fenced[0] != want[0] || st.fenced[1] != want[1] {
		t.Errorf("the fenced landings were given cancels %v; want %v (the count each step began with)", st.fenced, want)
	}
}
