package coordination_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// claimedMidWriteStore lets another replica claim the session's run just
// as a cancelled entry is on its way to the store: the run's lease is made
// to expire and replica-b claims it, then the write goes on, as a write
// sent in time whose connection stalled past the lease lands.
type claimedMidWriteStore struct {
	*memstore.Store
	t       *testing.T
	claimed chan coordination.RunLease
}

func (s *claimedMidWriteStore) steal(id string, e coordination.SessionEntry) {
	if e.Kind != coordination.SessionCancelled {
		return
	}
	ctx := context.Background()
	l, err := s.Store.ReadRun(ctx, id)
	if err != nil || l == nil {
		s.t.Errorf("reading the run's lease to steal it: %+v, %v", l, err)
		return
	}
	if _, err := s.Store.RenewRun(ctx, id, l.Version, time.Nanosecond); err != nil {
		s.t.Errorf("expiring the run's lease: %v", err)
		return
	}
	time.Sleep(time.Millisecond)
	b, err := s.Store.AcquireRun(ctx, id, coordination.LeaseOwner{ID: "replica-b", Host: "elsewhere", PID: 2}, time.Hour)
	if err != nil {
		s.t.Errorf("replica-b's claim of the expired run: %v", err)
		return
	}
	s.claimed <- b
}

func (s *claimedMidWriteStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	s.steal(id, e)
	return s.Store.AppendSession(ctx, id, e)
}

func (s *claimedMidWriteStore) AppendSessionLeased(ctx context.Context, id string, v int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	s.steal(id, e)
	return s.Store.AppendSessionLeased(ctx, id, v, e)
}

// TestAStopsRecordThatLandsAfterAnotherClaimIsRefused: a cancel's record
// begun while the run's lease held, which reaches the store only after
// another replica claimed the run, is refused by the store, so the run
// that took over is not stopped by it. whileDown alone bounds when a
// write begins; before the fence the cancel landed in replica-b's session.
func TestAStopsRecordThatLandsAfterAnotherClaimIsRefused(t *testing.T) {
	st := &claimedMidWriteStore{Store: memstore.New(), t: t, claimed: make(chan coordination.RunLease, 1)}
	svc, started := blockedService(st, coordination.Options{RunHeartbeat: 50 * time.Millisecond, RunLeaseTTL: time.Minute})
	s, r := blockedRun(t, svc, started)
	r.Cancel()
	<-r.Done()
	var b coordination.RunLease
	select {
	case b = <-st.claimed:
	default:
		t.Fatal("the run wrote no cancelled entry at all: the test did not reach the race it is for")
	}
	for _, e := range ledgerOf(t, st.Store, s.ID).Session {
		if e.Kind == coordination.SessionCancelled {
			t.Errorf("the stopped run wrote %q into a session replica-b claimed (claim %d) while the write was on its way", e.Reason, b.Version)
		}
	}
	l, err := st.Store.ReadRun(context.Background(), s.ID)
	if err != nil || l == nil || l.ID != "replica-b" || l.Version != b.Version || l.Released {
		t.Errorf("the run lease after the run ended = %+v, %v; want replica-b's claim %d, untouched", l, err, b.Version)
	}
	if c := svc.Counts(); c.RunsLostLease != 1 {
		t.Errorf("counts %+v; want the run counted as one that lost its lease", c)
	}
}

// usageDownStore cannot record a usage entry while down, as a store gone
// away cannot.
type usageDownStore struct {
	*memstore.Store
	down atomic.Bool
}

func (s *usageDownStore) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if e.Kind == coordination.SessionUsage && s.down.Load() {
		return coordination.SessionEntry{}, errDown
	}
	return s.Store.AppendSession(ctx, id, e)
}

// TestASpendRecordedAfterItsRunEndedStillAmendsTheResult: a run's calls
// cancelled by its timeout while the store could not take their spend;
// the run ends, finished, and lets its lease go; the spend is recorded once
// the store answers, and the finished result is amended to count it. The
// amend is the session's, not the ended run's: fenced by the run's released
// lease, it was refused and the result never counted the spend.
func TestASpendRecordedAfterItsRunEndedStillAmendsTheResult(t *testing.T) {
	st := &usageDownStore{Store: memstore.New()}
	paid := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-ctx.Done()
		return providers.Action{}, providers.Usage{Input: 100}, ctx.Err()
	})
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(),
		Open: func(providers.Spec) (providers.Provider, error) { return paid, nil }})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}, Rules: coordination.Rules{TimeoutSeconds: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatalf("the run: %v", err)
	}
	if res.Status != coordination.StatusFinished && res.Status != coordination.StatusFailed {
		t.Fatalf("the run ended %s; want it ended by its timeout", res.Status)
	}
	if l, err := st.ReadRun(ctx, s.ID); err != nil || l == nil || !l.Released {
		t.Fatalf("the run's lease after it ended: %+v, %v; want it released", l, err)
	}
	st.down.Store(false)
	counted := func() bool {
		r, err := svc.Result(ctx, s.ID)
		return err == nil && r.Usage.Input == 200
	}
	if !coordination.Eventually(15*time.Second, counted) {
		r, _ := svc.Result(ctx, s.ID)
		t.Fatalf("the result counts %d input tokens once the store answered; want the two cancelled calls' 200", r.Usage.Input)
	}
}
