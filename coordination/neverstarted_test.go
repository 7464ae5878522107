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

// setupGoneOnceClaimed is a store whose sessions' setups cannot be read
// once a run lease has been claimed through it: a start that fails after
// its claim.
type setupGoneOnceClaimed struct {
	*memstore.Store
	claimed atomic.Bool
}

func (s *setupGoneOnceClaimed) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.Store.AcquireRun(ctx, id, owner, ttl)
	if err == nil {
		s.claimed.Store(true)
	}
	return l, err
}

func (s *setupGoneOnceClaimed) Session(ctx context.Context, id string) (*coordination.Session, error) {
	if s.claimed.Load() {
		return nil, errors.New("the setup cannot be read here")
	}
	return s.Store.Session(ctx, id)
}

// TestAFailedStartOfASessionItsCreatorNeverStartedLeavesItInterrupted: a
// session created for a run by another server, which no run had claimed,
// whose start here fails after its claim, leaves the claim to expire: the
// session reads interrupted, for a server resuming those. Released, the
// lease would have had it read running for ever with nothing running it.
func TestAFailedStartOfASessionItsCreatorNeverStartedLeavesItInterrupted(t *testing.T) {
	ctx := context.Background()
	raw := memstore.New()
	models, _, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	back := func() time.Time { return time.Now().Add(-coordination.NeverStartedGrace - 5*time.Second) }
	creator := coordination.NewService(raw, coordination.Options{Open: h.Open, Now: back})
	seed := int64(1)
	sess, err := creator.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	st := &setupGoneOnceClaimed{Store: raw}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open, Logger: zerolog.Nop(), RunHeartbeat: 5 * time.Millisecond, RunLeaseTTL: 50 * time.Millisecond})
	if _, _, err := svc.Start(ctx, sess.ID); err == nil {
		t.Fatal("the start whose setup could not be read after its claim started")
	}
	l, err := raw.ReadRun(ctx, sess.ID)
	if err != nil || l == nil || l.Released {
		t.Fatalf("the lease after the failed start: %+v, %v; want it left unreleased", l, err)
	}
	reader := coordination.NewService(raw, coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
	untilStatus(t, reader, sess.ID, coordination.StatusInterrupted, "after the failed start")
}

// TestASessionRefusedItsRunIsNotOneItsCreatorLeft: a session created for
// a run and refused it (Service.NotStarted: cancelled, no lease ever) is
// not one its creator left. Stepped by its client since, it reads as its
// ledger says, not interrupted; resumed by its client minutes later, its
// timeline does not say a server died before its run began.
func TestASessionRefusedItsRunIsNotOneItsCreatorLeft(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	models, _, provs := coordtest.Team(t, 3)
	h := &coordtest.Harness{T: t, Providers: provs}
	back := func() time.Time { return time.Now().Add(-2 * time.Minute) }
	creator := coordination.NewService(st, coordination.Options{Open: h.Open, Now: back, Logger: zerolog.Nop()})
	seed := int64(1)
	refused := func() *coordination.Session {
		s, err := creator.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := creator.NotStarted(ctx, s.ID, "the server was at its limit of running teams"); !ok || err != nil {
			t.Fatalf("NotStarted = %v, %v", ok, err)
		}
		return s
	}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open, Logger: zerolog.Nop()})
	stepped := refused()
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: stepped.ID, AgentID: stepped.AgentIDs()[0]}); err != nil {
		t.Fatalf("stepping the refused session: %v", err)
	}
	if r, err := svc.Result(ctx, stepped.ID); err != nil || r.Status == coordination.StatusInterrupted {
		t.Errorf("a refused session its client steps reads %v, %v", r.Status, err)
	}
	resumed := refused()
	run, _, err := svc.Start(ctx, resumed.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	v, err := svc.Status(ctx, resumed.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range v.Timeline {
		if strings.Contains(e.Message, "stopped before its run began") {
			t.Errorf("a refused session resumed by its client reads as taken up from a dead creator: %q", e.Message)
		}
	}
}

// neverReady is a memory store whose SetReady fails: a creation whose end
// is never recorded, as a creator that died part-way leaves it.
type neverReady struct{ *memstore.Store }

func (neverReady) SetReady(context.Context, string, time.Time, *coordination.Creator) error {
	return errors.New("dummy: the creator died before its creation ended")
}

// TestACreationCutShortReadsInterruptedOnlyLongAfter: a session created for
// a run whose creation never recorded its end (ReadyAt zero) reads running
// while its creation may still be under way, past NeverStartedGrace too,
// and interrupted once UnfinishedCreationGrace has passed since it began:
// not running for ever with nothing running it.
func TestACreationCutShortReadsInterruptedOnlyLongAfter(t *testing.T) {
	ctx := context.Background()
	st := neverReady{memstore.New()}
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	creator := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, Now: clock})
	if _, err := creator.Create(ctx, coordination.TeamSpec{SessionID: "cut_short", Task: "What is 2 + 2?", Models: []string{"sim", "sim"}}); err == nil {
		t.Fatal("a creation whose end could not be recorded succeeded")
	}
	if ok, err := creator.NotStarted(ctx, "cut_short", "dummy: refused"); ok || err != nil {
		t.Errorf("NotStarted = %v, %v for a session whose creation failed; want it not taken for one created here for a run", ok, err)
	}
	reader := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, Now: clock})
	for _, c := range []struct {
		after time.Duration
		want  string
	}{
		{2 * coordination.NeverStartedGrace, coordination.StatusRunning},
		{coordination.UnfinishedCreationGrace + coordination.MaxClockSkew + time.Second, coordination.StatusInterrupted},
	} {
		offset.Store(int64(c.after))
		v, err := reader.Status(ctx, "cut_short")
		if err != nil || v.Result.Status != c.want {
			t.Errorf("%v after a creation cut short: %v, %v; want %s", c.after, v.Result.Status, err, c.want)
		}
	}
}
