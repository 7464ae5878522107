package coordination_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// leasedStore is a memory store whose step locks are LeasedLandings, as
// the PostgreSQL store's are: a landing checks the step lease, appends,
// and releases the lease in one call, which then holds on for hold (as a
// slow write would), so that heartbeats fall due during it. With lose set,
// a landing that wrote answers as if the store's answer were lost, once.
type leasedStore struct {
	*memstore.Store
	hold                   time.Duration
	lose                   atomic.Bool
	reads, releases, lands atomic.Int64
}

var errLostAnswer = errors.New("dummy: connection lost after the commit")

func (s *leasedStore) Unavailable(err error) bool { return errors.Is(err, errLostAnswer) }

func (s *leasedStore) ReadSteps(ctx context.Context, id string) (map[string]*coordination.RunLease, error) {
	s.reads.Add(1)
	return s.Store.ReadSteps(ctx, id)
}

func (s *leasedStore) ReleaseStep(ctx context.Context, id, agent string, version int64) error {
	s.releases.Add(1)
	return s.Store.ReleaseStep(ctx, id, agent, version)
}

func (s *leasedStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.Store.LockStep(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	return &leasedLock{StepLock: l, st: s, id: id, agent: agent}, nil
}

type leasedLock struct {
	coordination.StepLock
	st        *leasedStore
	id, agent string
	landed    *coordination.Entry
}

func (l *leasedLock) AppendAndRelease(ctx context.Context, e coordination.Entry) (coordination.Entry, error) {
	out, err := l.Append(ctx, e)
	if err == nil {
		l.Release()
	}
	return out, err
}

func (l *leasedLock) LandLeased(ctx context.Context, e coordination.Entry, version int64, cancels int) (coordination.Entry, bool, error) {
	l.st.lands.Add(1)
	defer time.Sleep(l.st.hold)
	all, err := l.st.Store.ReadSteps(ctx, l.id)
	if err != nil {
		return coordination.Entry{}, false, err
	}
	if cur := all[l.agent]; cur == nil || cur.Version != version || cur.Released {
		if l.landed != nil { // this very landing, its answer lost: the PostgreSQL store's storedIs
			return *l.landed, true, nil
		}
		return coordination.Entry{}, false, coordination.StepLeaseLost(l.id, l.agent)
	}
	// The session's cancels, as the PostgreSQL store counts them in the
	// landing's transaction (massgen_hold_uncancelled).
	led, err := l.st.Store.Ledger(ctx, l.id)
	if err != nil {
		return coordination.Entry{}, false, err
	}
	n := 0
	for _, se := range led.Session {
		if se.Kind == coordination.SessionCancelled {
			n++
		}
	}
	if n > cancels {
		return coordination.Entry{}, false, coordination.CancelledMidStep(l.id, l.agent, l.Step())
	}
	out, err := l.AppendAndRelease(ctx, e)
	if err != nil {
		return coordination.Entry{}, false, err
	}
	if err := l.st.Store.ReleaseStep(ctx, l.id, l.agent, version); err != nil {
		return coordination.Entry{}, false, err
	}
	if l.st.lose.CompareAndSwap(true, false) {
		l.landed = &out
		return coordination.Entry{}, false, errLostAnswer
	}
	return out, true, nil
}

// leasedTeam is a step-driven session of two sim agents on st, its
// heartbeat every 5 ms, logging to logs.
func leasedTeam(t *testing.T, st coordination.Store, logs *coordtest.SyncBuffer) (*coordination.Service, *coordination.Session) {
	return leasedTeamWith(t, st, logs, coordination.Rules{})
}

// leasedTeamWith is leasedTeam with the session's rules.
func leasedTeamWith(t *testing.T, st coordination.Store, logs *coordtest.SyncBuffer, rules coordination.Rules) (*coordination.Service, *coordination.Session) {
	t.Helper()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.New(logs),
		RunHeartbeat: 5 * time.Millisecond, RunLeaseTTL: time.Minute})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s
}

// TestALeasedLandingIsTheStepsFenceAndRelease: a server step on a store
// whose step lock is a LeasedLanding lands through it: no read of the
// leases before it, no release after it, and the heartbeats that fell due
// while it wrote renew nothing after its release (they would find the
// lease released and report it claimed by another process).
func TestALeasedLandingIsTheStepsFenceAndRelease(t *testing.T) {
	st := &leasedStore{Store: memstore.New(), hold: 50 * time.Millisecond}
	logs := &coordtest.SyncBuffer{}
	svc, s := leasedTeam(t, st, logs)
	agent := s.AgentIDs()[0]
	reads := st.reads.Load()
	if _, err := svc.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatal(err)
	}
	if n := st.lands.Load(); n != 1 {
		t.Errorf("the step landed through LandLeased %d times, want once", n)
	}
	if n := st.reads.Load() - reads; n != 0 {
		t.Errorf("the step read the leases %d times, want none (fenced by its landing)", n)
	}
	if n := st.releases.Load(); n != 0 {
		t.Errorf("the step released its lease %d times after its landing did, want none", n)
	}
	if strings.Contains(logs.String(), "claimed by another process") {
		t.Errorf("the step's heartbeat took its landing's release for a loss:\n%s", logs.String())
	}
	if ls, _ := st.Store.ReadSteps(context.Background(), s.ID); ls[agent] == nil || !ls[agent].Released {
		t.Errorf("step lease after landing = %+v, want released", ls[agent])
	}
}

// TestALeasedLandingWhoseAnswerWasLostIsNotTakenForALoss: a landing that
// wrote and released its lease, its answer lost (the store unreachable),
// is tried again; the heartbeats meanwhile find the lease released, by
// that landing, which proves no other process took it: the retry lands.
func TestALeasedLandingWhoseAnswerWasLostIsNotTakenForALoss(t *testing.T) {
	st := &leasedStore{Store: memstore.New(), hold: 20 * time.Millisecond}
	st.lose.Store(true)
	logs := &coordtest.SyncBuffer{}
	svc, s := leasedTeam(t, st, logs)
	agent := s.AgentIDs()[0]
	res, err := svc.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: agent})
	if err != nil {
		t.Fatalf("a landing retried after its answer was lost: %v; want it landed", err)
	}
	if n := st.lands.Load(); n != 2 {
		t.Errorf("LandLeased was called %d times, want twice (the lost answer, the retry)", n)
	}
	if res.AgentID != agent {
		t.Errorf("the step's result is %+v", res)
	}
	if strings.Contains(logs.String(), "claimed by another process") {
		t.Errorf("the step's heartbeat took its own landing's release for a loss:\n%s", logs.String())
	}
	l, err := st.Ledger(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Agents[agent]); n != 1 {
		t.Errorf("%d entries of %s, want 1", n, agent)
	}
}
