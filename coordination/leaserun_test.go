package coordination_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// losingStore is a memory store whose renewals fail with ErrLeaseLost once
// lost is set, as when another process claimed the run.
type losingStore struct {
	*memstore.Store
	lost    atomic.Bool
	renewed atomic.Int32
}

func (s *losingStore) RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	if s.lost.Load() {
		return coordination.RunLease{}, coordination.ErrLeaseLost
	}
	s.renewed.Add(1)
	return s.Store.RenewRun(ctx, id, version, ttl)
}

func slowTeam(t *testing.T, st coordination.Store) (*coordination.Service, string) {
	t.Helper()
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, RunHeartbeat: 10 * time.Millisecond, RunLeaseTTL: 40 * time.Millisecond})
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=30s", "sim:latency=30s"}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, s.ID
}

// TestARunHoldsItsLeaseByHeartbeatAndReleasesIt: while a run lives its lease
// is renewed (never expiring however long a step takes), and its end
// releases it, so the session never reads interrupted.
func TestARunHoldsItsLeaseByHeartbeatAndReleasesIt(t *testing.T) {
	st := &losingStore{Store: memstore.New()}
	svc, id := slowTeam(t, st)
	ctx := context.Background()
	r, _, err := svc.Start(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Progress, not a rate: under -race on a loaded machine 150 ms of wall
	// time (several lease lifetimes) can hold fewer than three heartbeats,
	// so the test waits (bounded) for three renewals with the lease held.
	// A run without its heartbeat renews none, and its 40 ms lease expires.
	var l *coordination.RunLease
	if !coordination.Eventually(10*time.Second, func() bool {
		l, err = st.ReadRun(ctx, id)
		return err == nil && l.Held(time.Now()) && st.renewed.Load() >= 3
	}) {
		t.Fatalf("lease of a live run = %+v, %v (%d renewals); want held by heartbeats", l, err, st.renewed.Load())
	}
	if v, _ := svc.Status(ctx, id); v.Result.Status != coordination.StatusRunning {
		t.Errorf("a live run's session reads %q", v.Result.Status)
	}
	r.Cancel()
	<-r.Done()
	if l, _ := st.ReadRun(ctx, id); l == nil || !l.Released {
		t.Errorf("lease after the run ended = %+v, want released", l)
	}
	if v, _ := svc.Status(ctx, id); v.Result.Status != coordination.StatusCancelled {
		t.Errorf("a cancelled run's session reads %q, want cancelled", v.Result.Status)
	}
}

// TestARunThatLostItsLeaseStopsWithoutWriting: a run whose lease another
// process claimed (it was fenced) stops at its next heartbeat and records
// nothing, not even a cancellation: the session is the new holder's.
func TestARunThatLostItsLeaseStopsWithoutWriting(t *testing.T) {
	st := &losingStore{Store: memstore.New()}
	svc, id := slowTeam(t, st)
	ctx := context.Background()
	r, _, err := svc.Start(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	st.lost.Store(true)
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a run that lost its lease still runs after 5s")
	}
	if _, err := r.Result(); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Errorf("run result error = %v, want ErrLeaseLost", err)
	}
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Session {
		if e.Kind == coordination.SessionCancelled {
			t.Errorf("the fenced run recorded %s", e.Kind)
		}
	}
}
