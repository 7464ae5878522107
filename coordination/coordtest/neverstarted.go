package coordtest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// NeverStartedReadsInterrupted plays "a run's state is always true"
// (docs/DESIGN.md, "Runs have owners") for a server that dies between
// creating a session for a run and its run's claim: a service over creator
// creates the session and never starts it, as a server killed in that
// window leaves it, and a service over reader (another process or replica
// on the same store) reads it running within coordination.NeverStartedGrace
// of its creation and interrupted past it, in Status, Inspect, Result and
// the session list; resuming interrupted sessions then runs it to its end,
// the timeline saying so. A step-driven session, which has no run lease by
// design, reads running all along. The creator's clock is set back rather
// than the grace waited out.
func NeverStartedReadsInterrupted(t *testing.T, creator, reader coordination.Store) {
	ctx := context.Background()
	late := coordination.NeverStartedGrace + 5*time.Second
	models, _, provs := Team(t, 2)
	h := &Harness{T: t, Providers: provs}
	back := func() time.Time { return time.Now().Add(-late) }
	killed := coordination.NewService(creator, coordination.Options{Open: h.Open, Now: back})
	s := create(t, killed, models)
	seed := int64(1)
	stepped, err := killed.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: models, Seed: &seed, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}

	// The reader's clock starts at the creator's, the session just
	// created, and then goes to the present, the grace passed.
	var mu sync.Mutex
	offset := -late
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	svc := coordination.NewService(reader, coordination.Options{Parallel: 2, Open: h.Open, Now: clock})
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusRunning {
		t.Fatalf("just created, the session reads %v (%v), want running: its run may be starting", statusOf(v), err)
	}
	mu.Lock()
	offset = 0
	mu.Unlock()

	for name, read := range map[string]func(context.Context, string) (*coordination.StatusView, error){"Status": svc.Status, "Inspect": svc.Inspect} {
		v, err := read(ctx, s.ID)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil || !v.Result.LastAlive.Equal(s.CreatedAt) {
			t.Errorf("%s past the grace, no run having claimed it: %s, last alive %v; want interrupted, last alive %v (its creation)", name, v.Result.Status, v.Result.LastAlive, s.CreatedAt)
		}
	}
	if res, err := svc.Result(ctx, s.ID); err != nil || res.Status != coordination.StatusInterrupted {
		t.Errorf("Result past the grace: %v (%v), want interrupted", status(res), err)
	}
	if v, err := svc.Status(ctx, stepped.ID); err != nil || v.Result.Status != coordination.StatusRunning {
		t.Errorf("a step-driven session past the grace reads %v (%v), want running: it has no run lease by design", statusOf(v), err)
	}
	page, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: coordination.StatusInterrupted})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 1 || page.Sessions[0].SessionID != s.ID {
		t.Fatalf("the interrupted sessions listed: %+v; want %s alone", page.Sessions, s.ID)
	}

	resumed, err := svc.ResumeInterrupted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed) != 1 || resumed[0] != s.ID {
		t.Fatalf("resumed %v; want %s", resumed, s.ID)
	}
	if r, ok := svc.Running(s.ID); ok {
		wait(t, r.Done(), "the resumed run")
	}
	res, err := svc.Result(ctx, s.ID)
	if err != nil || res.Status != coordination.StatusFinished {
		t.Fatalf("the resumed session ended %v (%v), want finished", status(res), err)
	}
	if es, ok := reader.(coordination.EventSource); ok {
		evs, err := es.Events(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		said := false
		for _, e := range evs {
			said = said || e.Type == "resumed" && strings.Contains(e.Message, "stopped before its run began")
		}
		if !said {
			t.Errorf("the timeline does not say the session was taken up from a server that never started it: %+v", evs)
		}
	}
}
