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
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// slots is a RunSlot with n slots, counting those taken and not given back.
type slots struct {
	free chan struct{}
}

func newSlots(n int) *slots {
	s := &slots{free: make(chan struct{}, n)}
	for range n {
		s.free <- struct{}{}
	}
	return s
}

func (s *slots) take(context.Context) (func(), error) {
	select {
	case <-s.free:
		return func() { s.free <- struct{}{} }, nil
	default:
		return nil, errors.New("dummy: this server runs its limit of teams")
	}
}

func (s *slots) inUse(total int) int { return total - len(s.free) }

// TestStartOrFollowRefusesWithoutASlotAndSaysTheSessionWasLeft: a session
// created for a run this server has no slot for reads cancelled, and the
// refusal says it was left so (for the caller to name it) and that the
// server was at its limit.
func TestStartOrFollowRefusesWithoutASlotAndSaysTheSessionWasLeft(t *testing.T) {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = svc.StartOrFollow(ctx, s.ID, newSlots(0).take, true)
	ns, ok := errors.AsType[*coordination.NotStartedError](err)
	if !ok || !ns.AtLimit || !ns.Left || !strings.Contains(err.Error(), "limit of teams") {
		t.Fatalf("refused without a slot: %#v (%v); want a NotStartedError at the limit that left the session", ns, err)
	}
	v, err := svc.Status(ctx, s.ID)
	if err != nil || v.Result.Status != coordination.StatusCancelled {
		t.Fatalf("the session refused its run: %v, %v; want cancelled", v, err)
	}
}

// TestStartOrFollowTakesASlotOnlyForARunItStarts: the starter keeps its
// slot until the run ends; a second caller joining the run here gives its
// own straight back.
func TestStartOrFollowTakesASlotOnlyForARunItStarts(t *testing.T) {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=300ms", "sim:latency=300ms"}})
	if err != nil {
		t.Fatal(err)
	}
	sl := newSlots(2)
	run, started, err := svc.StartOrFollow(ctx, s.ID, sl.take, true)
	if err != nil || !started {
		t.Fatalf("the first call: started %v, %v", started, err)
	}
	joined, started2, err := svc.StartOrFollow(ctx, s.ID, sl.take, true)
	if err != nil || started2 || joined != run {
		t.Fatalf("the second call: started %v, same run %v, %v; want the run joined", started2, joined == run, err)
	}
	if n := sl.inUse(2); n != 1 {
		t.Errorf("%d slots in use while the run goes on; want the starter's one", n)
	}
	<-run.Done()
	waitUntil(t, time.Second, "the slot given back", func() bool { return sl.inUse(2) == 0 })
}

// TestAFollowedRunWhoseHolderHandsItOverIsTakenUp: B follows a run A
// holds; A stops and hands it over while no replica has taken it up. B's
// caller asked for the run's end, so B takes the run up, with a slot of
// its own, and the run B returned ends finished. Not started: B's caller
// going away would not cancel it.
func TestAFollowedRunWhoseHolderHandsItOverIsTakenUp(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, HandOver: true, RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 10 * time.Second})
	b := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 10 * time.Second})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=400ms", "sim:latency=400ms"}})
	if err != nil {
		t.Fatal(err)
	}
	ra, _, err := a.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	sl := newSlots(1)
	run, started, err := b.StartOrFollow(ctx, s.ID, sl.take, true)
	if err != nil || started {
		t.Fatalf("B on A's run: started %v, %v; want it followed", started, err)
	}
	if n := sl.inUse(1); n != 0 {
		t.Errorf("B follows A's run with %d slots taken; want none", n)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ra.Result(); err == nil || !strings.Contains(err.Error(), "hands the run over") {
		t.Fatalf("A's run ended with %v; want it handed over mid-run, for B to take up", err)
	}
	select {
	case <-run.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the followed run did not end within 30 s of its hand-over")
	}
	res, err := run.Result()
	if err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("the run B followed: %+v, %v; want it taken up and finished", res, err)
	}
	waitUntil(t, time.Second, "B's slot given back", func() bool { return sl.inUse(1) == 0 })
}

// TestACancelBetweenAFollowersReadAndItsTakeoverIsKept: B follows a run A
// holds; A hands it over, B's follower reads it interrupted, and a
// cancel_team on a third replica lands before B's takeover claims the run
// (while B takes its run slot, between the two). The cancel answered
// cancelled; the takeover lifts only the cancels B's read saw, so the
// session stays cancelled and no agent steps after the cancel. Before, the
// takeover counted the cancels at its claim and lifted this one: the team
// ran on, paying for its calls.
func TestACancelBetweenAFollowersReadAndItsTakeoverIsKept(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, HandOver: true, RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 10 * time.Second})
	b := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 10 * time.Second})
	c := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=400ms", "sim:latency=400ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	sl := newSlots(1)
	var takes atomic.Int32
	var cancelled *coordination.TeamResult
	var cancelErr error
	slot := func(ctx context.Context) (func(), error) {
		// The first is B's call on A's run; the second its takeover's,
		// after its read found the run interrupted and before its claim.
		if takes.Add(1) == 2 {
			cancelled, cancelErr = c.Cancel(ctx, s.ID)
		}
		return sl.take(ctx)
	}
	run, started, err := b.StartOrFollow(ctx, s.ID, slot, true)
	if err != nil || started {
		t.Fatalf("B on A's run: started %v, %v; want it followed", started, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the followed run did not end within 30 s of its hand-over")
	}
	if takes.Load() < 2 {
		t.Fatalf("B took %d run slots; want its takeover to have taken one", takes.Load())
	}
	if cancelErr != nil || cancelled == nil || cancelled.Status != coordination.StatusCancelled {
		t.Fatalf("the cancel between B's read and its claim = %+v, %v; want cancelled", cancelled, cancelErr)
	}
	v, err := c.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusCancelled || v.Result.Steps != cancelled.Steps {
		t.Errorf("after B's takeover the session is %s with %d steps; the cancel was acknowledged at %d steps", v.Result.Status, v.Result.Steps, cancelled.Steps)
	}
	if res, err := run.Result(); err == nil && res.Status != coordination.StatusCancelled {
		t.Errorf("the run B returned ended %s; want cancelled", res.Status)
	}
}

// TestAFollowedRunNobodyCanTakeUpEndsInterrupted: with no slot free here,
// the caller gets the followed run as it ended, interrupted, not an error.
func TestAFollowedRunNobodyCanTakeUpEndsInterrupted(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, HandOver: true, RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 10 * time.Second})
	b := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=2s", "sim:latency=2s"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	run, _, err := b.StartOrFollow(ctx, s.ID, newSlots(0).take, true)
	if err != nil {
		t.Fatalf("B follows A's run without a slot: %v", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	res, err := run.Result()
	if err != nil || res.Status != coordination.StatusInterrupted {
		t.Fatalf("the run B followed and could not take up: %+v, %v; want it interrupted", res, err)
	}
	if _, running := b.Running(s.ID); running {
		t.Error("B runs the session it had no slot for")
	}
}

// TestWithoutFollowARunHeldElsewhereIsRefused: a caller that only starts
// runs (start_team, the web view) is told the run goes on elsewhere.
func TestWithoutFollowARunHeldElsewhereIsRefused(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	b := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open})
	s, err := a.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=2s", "sim:latency=2s"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := a.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { r.Cancel(); <-r.Done() }()
	// At its limit too: a run held elsewhere needs no slot here, so the
	// answer is that it runs elsewhere, not that this server is full.
	for _, sl := range []*slots{newSlots(1), newSlots(0)} {
		if _, _, err := b.StartOrFollow(ctx, s.ID, sl.take, false); !errors.Is(err, coordination.ErrSessionRunning) {
			t.Errorf("without follow, a run held elsewhere: %v; want ErrSessionRunning", err)
		}
	}
}

// waitUntil fails the test unless ok holds within d.
func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within %v", what, d)
		}
	}
}
