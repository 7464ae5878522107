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
// of the end of its creation and interrupted past it, in Status, Inspect, Result and
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
		if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil || !sameMilli(*v.Result.LastAlive, s.ReadyAt) {
			t.Errorf("%s past the grace, no run having claimed it: %s, last alive %v; want interrupted, last alive %v (the end of its creation)", name, v.Result.Status, v.Result.LastAlive, s.ReadyAt)
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

	resumed, err := svc.ResumeInterrupted(ctx, nil)
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

// SlowCreationIsNotTakenUp plays "a creation under way is never taken up"
// (docs/DESIGN.md, "Runs have owners"): a service over creator creates a
// session for a run whose creation takes longer than
// coordination.NeverStartedGrace after its setup is stamped (its models
// checked and its starting files stored slowly: the clock moves on by more
// than the grace before the session's timeline says it is created, the
// last of its writes but the stamp of its end), and a service over reader
// (another process or replica on the same store) reads it running, lists
// no interrupted session and resumes none, while it is created and just
// after; nor does abandoned, the store's own look for runs left (the
// PostgreSQL store's, on the database's clock), when given. The grace
// counts from the end of the creation: past it, the session reads
// interrupted, last alive then.
func SlowCreationIsNotTakenUp(t *testing.T, creator, reader coordination.Store, abandoned func(context.Context) ([]string, error)) {
	ctx := context.Background()
	late := coordination.NeverStartedGrace + coordination.MaxClockSkew + 5*time.Second
	models, _, provs := Team(t, 2)
	h := &Harness{T: t, Providers: provs}
	var mu sync.Mutex
	offset := -late
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	set := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); offset = d }
	svc := coordination.NewService(reader, coordination.Options{Parallel: 2, Open: h.Open, Now: clock})
	notTakenUp := func(when, id string) {
		t.Helper()
		if v, err := svc.Status(ctx, id); err != nil || v.Result.Status != coordination.StatusRunning {
			t.Errorf("%s, a session created for a run reads %v (%v), want running: its run has not been started yet", when, statusOf(v), err)
		}
		page, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: coordination.StatusInterrupted})
		if err != nil || len(page.Sessions) != 0 {
			t.Errorf("%s, the interrupted sessions listed: %+v (%v); want none", when, page, err)
		}
		if abandoned == nil {
			return
		}
		if ids, err := abandoned(ctx); err != nil || len(ids) != 0 {
			t.Errorf("%s, the store's look for runs left lists %v (%v); want none", when, ids, err)
		}
	}
	seen := false
	slow := &createdThen{Store: creator, created: func(id string) {
		seen = true
		set(0) // the creation took longer than the grace
		notTakenUp("while its creator is still creating it", id)
	}}
	s := create(t, coordination.NewService(slow, coordination.Options{Open: h.Open, Now: clock}), models)
	if !seen {
		t.Fatal("the creation never said the session was created")
	}
	if s.ReadyAt.Sub(s.CreatedAt) < late {
		t.Fatalf("the creation ended %v after its setup was stamped, want at least %v", s.ReadyAt.Sub(s.CreatedAt), late)
	}
	notTakenUp("just created", s.ID)
	if resumed, err := svc.ResumeInterrupted(ctx, nil); err != nil || len(resumed) != 0 {
		t.Fatalf("just created, a resume of interrupted sessions took up %v (%v); want none", resumed, err)
	}
	set(late)
	v, err := svc.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil || !sameMilli(*v.Result.LastAlive, s.ReadyAt) {
		t.Errorf("past the grace since its creation ended: %s, last alive %v; want interrupted, last alive %v", v.Result.Status, v.Result.LastAlive, s.ReadyAt)
	}
}

// createdThen is a store that calls created once the service has told the
// session's timeline it is created (Create's last write before its end is
// stamped).
type createdThen struct {
	coordination.Store
	created func(id string)
}

func (s *createdThen) AppendEvent(ctx context.Context, id string, ev coordination.Event) error {
	err := s.Store.AppendEvent(ctx, id, ev)
	if err == nil && ev.Type == "session_created" {
		s.created(id)
	}
	return err
}

// sameMilli tells whether a and b are one time at the millisecond
// precision every store keeps (PostgreSQL rounds to the microsecond).
func sameMilli(a, b time.Time) bool {
	return a.Sub(b).Abs() < time.Millisecond
}
