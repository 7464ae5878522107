package coordtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// RetriedCreationReadsRunning plays "a run's state is always true"
// (docs/DESIGN.md, "Runs have owners") for a run retried by another
// process: a server creates a session for a run and dies (cut: before its
// creation ended; otherwise after it, before its run's claim), and the
// client asks another process (over retrier) for the same team
// (run_team{session_id}), which finishes the creation and is about to
// start its run. A reader on the same store (over reader, on this host)
// reads the session interrupted while nobody is on it, running once the
// retrier has it, lists it among no interrupted sessions and resumes
// none; the retrier's run then ends it, finished. The dead creator is
// this process with another start time: a pid reused.
func RetriedCreationReadsRunning(t *testing.T, first, retrier, reader coordination.Store, cut bool) {
	ctx := context.Background()
	models, _, provs := Team(t, 2)
	h := &Harness{T: t, Providers: provs}
	seed := int64(1)
	spec := coordination.TeamSpec{SessionID: "retried_team", Task: "What is 2+2?", Models: models, Seed: &seed}

	dead := &deadCreator{Store: first, cut: cut}
	_, err := coordination.NewService(dead, coordination.Options{Open: h.Open}).Create(ctx, spec)
	if cut != (err != nil) {
		t.Fatalf("the first creation (cut short: %v) returned %v", cut, err)
	}
	if !dead.created {
		t.Fatal("the first creation stored no session")
	}
	svc := coordination.NewService(reader, coordination.Options{Parallel: 2, Open: h.Open})
	if v, err := svc.Status(ctx, spec.SessionID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Skipf("its creator dead, the session reads %v (%v), not interrupted: this host cannot tell a creator dead", statusOf(v), err)
	}

	again := coordination.NewService(retrier, coordination.Options{Parallel: 2, Open: h.Open})
	s, err := again.Create(ctx, spec)
	if err != nil {
		t.Fatalf("the retried creation: %v", err)
	}
	for name, read := range map[string]func(context.Context, string) (*coordination.StatusView, error){"Status": svc.Status, "Inspect": svc.Inspect} {
		if v, err := read(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusRunning {
			t.Errorf("%s, the retrying process alive and about to start the run: %v (%v); want running", name, statusOf(v), err)
		}
	}
	if page, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: coordination.StatusInterrupted}); err != nil || len(page.Sessions) != 0 {
		t.Errorf("the interrupted sessions listed while the retrier starts the run: %+v (%v); want none", page, err)
	}
	if resumed, err := svc.ResumeInterrupted(ctx, nil); err != nil || len(resumed) != 0 {
		t.Errorf("a resume of interrupted sessions while the retrier starts the run took up %v (%v); want none", resumed, err)
		for _, id := range resumed {
			if r, ok := svc.Running(id); ok {
				wait(t, r.Done(), "the run taken up")
			}
		}
	}
	res, err := again.Run(ctx, s.ID, nil)
	if err != nil && !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("the retried run: %v", err)
	}
	if err == nil && res.Status != coordination.StatusFinished {
		t.Errorf("the retried run ended %s, want finished", res.Status)
	}
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusFinished {
		t.Errorf("after the retried run ended: %v (%v); want finished", statusOf(v), err)
	}
}

// deadCreator is a store whose sessions name as their creator this
// process started at another time (a pid reused: its creator is gone);
// cut, their creation never ends (SetReady fails), as a creator killed
// part-way leaves them.
type deadCreator struct {
	coordination.Store
	cut     bool
	created bool
}

func (d *deadCreator) Create(ctx context.Context, s *coordination.Session) error {
	if s.Creator != nil {
		c := *s.Creator
		c.ProcStart++
		s.Creator = &c
	}
	err := d.Store.Create(ctx, s)
	d.created = d.created || err == nil
	return err
}

func (d *deadCreator) SetReady(ctx context.Context, id string, at time.Time, by *coordination.Creator) error {
	if d.cut {
		return errors.New("killed before its creation ended")
	}
	return d.Store.SetReady(ctx, id, at, by)
}

// RetriedAfterItsRunDiedIsAResume plays "a run's state is always true"
// for a run retried in another process (over retrier) after the process
// that created the session and claimed its run died before any step
// landed: its ledger is empty, as a session never started has it, but a
// run began, so the retry is a resume of a dead run, not a creation taken
// over. Refused its run (the retrier at its limit of runs), the session
// still reads interrupted, for a resume to take it up, not cancelled as a
// session the retrier created; its timeline never says its creator
// "stopped before its run began"; run, it ends finished.
func RetriedAfterItsRunDiedIsAResume(t *testing.T, first, retrier, reader coordination.Store) {
	ctx := context.Background()
	models, _, provs := Team(t, 2)
	h := &Harness{T: t, Providers: provs}
	seed := int64(1)
	spec := coordination.TeamSpec{SessionID: "retried_run", Task: "What is 2+2?", Models: models, Seed: &seed}

	dead := &deadCreator{Store: first}
	if _, err := coordination.NewService(dead, coordination.Options{Open: h.Open}).Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	ls, ok := first.(coordination.LeaseStore)
	if !ok {
		t.Fatalf("%T keeps no run leases", first)
	}
	// The dead creator's run claimed the session: this process with
	// another start time, its lease short, as a killed run's runs out.
	owner := coordination.ThisProcess("dead-run")
	owner.ProcStart++
	if _, err := ls.AcquireRun(ctx, spec.SessionID, owner, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(coordination.MaxClockSkew + 200*time.Millisecond)
	svc := coordination.NewService(reader, coordination.Options{Parallel: 2, Open: h.Open})
	if v, err := svc.Status(ctx, spec.SessionID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Fatalf("its run dead, the session reads %v (%v), want interrupted", statusOf(v), err)
	}

	again := coordination.NewService(retrier, coordination.Options{Parallel: 2, Open: h.Open})
	s, err := again.Create(ctx, spec)
	if err != nil {
		t.Fatalf("the retried creation: %v", err)
	}
	full := func(context.Context) (func(), error) { return nil, errors.New("at the limit of running teams") }
	if _, _, err := again.StartOrFollow(ctx, s.ID, full, false); err == nil {
		t.Fatal("a start refused its slot started")
	}
	if v, err := svc.Status(ctx, s.ID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Errorf("its retry refused a slot, the session whose run died reads %v (%v); want interrupted, for a resume to take it up", statusOf(v), err)
	}
	res, err := again.Run(ctx, s.ID, nil)
	if err != nil || res.Status != coordination.StatusFinished {
		t.Errorf("the retried run ended %v (%v), want finished", status(res), err)
	}
	if es, ok := reader.(coordination.EventSource); ok {
		evs, err := es.Events(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if strings.Contains(e.Message, "stopped before its run began") {
				t.Errorf("the timeline says %q of a session whose run began", e.Message)
			}
		}
	}
}

// CriteriaSpendCreatorGoneReadsInterrupted plays "a run's state is always
// true" for a session created with the spend of the criteria call written
// for it (run --criteria auto: TeamSpec.CriteriaUsage, recorded in its
// ledger as its row is stored) whose creator died before its run's claim:
// that spend starts nothing, so the session reads interrupted (over
// reader, on this host) as one created without it does, is listed so, and
// a resume runs it to its end. Before, the spend's entry made it read as
// touched since its creation, and it read running for ever.
func CriteriaSpendCreatorGoneReadsInterrupted(t *testing.T, first, reader coordination.Store) {
	ctx := context.Background()
	models, _, provs := Team(t, 2)
	h := &Harness{T: t, Providers: provs}
	seed := int64(1)
	cost := 0.0012
	spec := coordination.TeamSpec{SessionID: "criteria_spent", Task: "What is 2+2?", Models: models, Seed: &seed,
		CriteriaUsage: &providers.Usage{Input: 1000, Output: 200, CostUSD: &cost}}
	if _, err := coordination.NewService(&deadCreator{Store: first}, coordination.Options{Open: h.Open}).Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	svc := coordination.NewService(reader, coordination.Options{Parallel: 2, Open: h.Open})
	for name, read := range map[string]func(context.Context, string) (*coordination.StatusView, error){"Status": svc.Status, "Inspect": svc.Inspect} {
		if v, err := read(ctx, spec.SessionID); err != nil || v.Result.Status != coordination.StatusInterrupted {
			t.Errorf("%s, its creator gone before its run began: %v (%v); want interrupted", name, statusOf(v), err)
		}
	}
	page, err := svc.ListSessions(ctx, coordination.SessionQuery{Status: coordination.StatusInterrupted})
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("the interrupted sessions listed: %+v (%v); want %s", page, err, spec.SessionID)
	}
	resumed, err := svc.ResumeInterrupted(ctx, nil)
	if err != nil || len(resumed) != 1 {
		t.Fatalf("resumed %v (%v); want %s", resumed, err, spec.SessionID)
	}
	if r, ok := svc.Running(spec.SessionID); ok {
		wait(t, r.Done(), "the resumed run")
	}
	if res, err := svc.Result(ctx, spec.SessionID); err != nil || res.Status != coordination.StatusFinished {
		t.Errorf("the resumed session ended %v (%v), want finished", status(res), err)
	}
}
