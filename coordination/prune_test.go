package coordination_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// pruned lists the ids a report deleted.
func pruned(rep *coordination.PruneReport) []string {
	var ids []string
	for _, p := range rep.Deleted {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return ids
}

// cancelledSession makes a cancelled session that never ran: ended at once.
func cancelledSession(t *testing.T, h *coordtest.Harness, models []string) string {
	t.Helper()
	s := h.Create(coordination.TeamSpec{Models: models})
	if _, err := h.Service.Cancel(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// TestPruneDeletesOnlyEndedSessionsNothingHolds: a prune deletes the
// sessions that ended before the cutoff, and keeps one a run holds, one
// with a step in flight, one a replica's run lease holds, one active
// since the cutoff and, unless asked for by name, an interrupted one.
func TestPruneDeletesOnlyEndedSessionsNothingHolds(t *testing.T) {
	ctx := context.Background()
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	finished := h.Create(coordination.TeamSpec{Models: models}).ID
	h.Run(finished)
	cancelled := cancelledSession(t, h, models)

	// A run on another process holds this one's run lock (a resume that
	// won the race): listed as cancelled, kept under the locks.
	runHeld := cancelledSession(t, h, models)
	// A step holds an agent's step lock.
	stepHeld := cancelledSession(t, h, models)
	// Another replica's run holds its run lease (it is taking it up).
	leaseHeld := cancelledSession(t, h, models)
	// Interrupted: its run died on another host, its lease long expired.
	interrupted := h.Create(coordination.TeamSpec{Models: models}).ID
	dead := coordination.LeaseOwner{ID: "killed", Host: "another-host.invalid", PID: 4242}
	l, err := h.Store.AcquireRun(ctx, interrupted, dead, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.AcquireRun(ctx, leaseHeld, coordination.LeaseOwner{ID: "alive", Host: "another-host.invalid", PID: 1}, time.Hour); err != nil {
		t.Fatal(err)
	}
	// Running: a live lease and no end.
	running := h.Create(coordination.TeamSpec{Models: models}).ID
	if _, err := h.Store.AcquireRun(ctx, running, coordination.LeaseOwner{ID: "alive", Host: "another-host.invalid", PID: 1}, time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(l.Expires.Add(coordination.MaxClockSkew + 50*time.Millisecond)))
	recent := cancelledSession(t, h, models) // active after the cutoff below

	unlockRun, err := h.Store.LockRun(ctx, runHeld)
	if err != nil {
		t.Fatal(err)
	}
	defer unlockRun()
	step, err := h.Store.LockStep(ctx, stepHeld, "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer step.Release()

	req := coordination.PruneRequest{OlderThan: 500 * time.Millisecond, DryRun: true}
	dry, err := h.Service.Prune(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pruned(dry), sortedIDs(finished, cancelled, runHeld); !slices.Equal(got, want) {
		t.Fatalf("a dry run would delete %v, want %v (a run lock is only seen when taken)", got, want)
	}
	if ids, _ := h.Store.Sessions(ctx); len(ids) != 8 {
		t.Fatalf("a dry run deleted sessions: %d left of 8", len(ids))
	}

	req.DryRun = false
	rep, err := h.Service.Prune(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pruned(rep), sortedIDs(finished, cancelled); !slices.Equal(got, want) {
		t.Fatalf("deleted %v, want %v; skipped %+v", got, want, rep.Skipped)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].ID != runHeld || !strings.Contains(rep.Skipped[0].Reason, "run holds it") {
		t.Fatalf("skipped %+v, want %s as held by a run", rep.Skipped, runHeld)
	}
	for _, id := range []string{finished, cancelled} {
		if _, err := h.Service.Status(ctx, id); !errors.Is(err, coordination.ErrSessionNotFound) {
			t.Fatalf("status of pruned %s: %v, want ErrSessionNotFound", id, err)
		}
	}
	for _, id := range []string{runHeld, stepHeld, leaseHeld, interrupted, running, recent} {
		if _, err := h.Store.Session(ctx, id); err != nil {
			t.Fatalf("kept session %s is gone: %v", id, err)
		}
	}

	// Named, an interrupted session goes; the running one never does.
	rep, err = h.Service.Prune(ctx, coordination.PruneRequest{OlderThan: 500 * time.Millisecond, Statuses: []string{coordination.StatusInterrupted}})
	if err != nil {
		t.Fatal(err)
	}
	if got := pruned(rep); !slices.Equal(got, []string{interrupted}) {
		t.Fatalf("a prune of interrupted sessions deleted %v, want [%s]", got, interrupted)
	}
}

func sortedIDs(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

// TestPruneRefusesWhatCouldWipeTheStore: no age, a status that has not
// ended or is none at all are refused, naming the choices.
func TestPruneRefusesWhatCouldWipeTheStore(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	cancelledSession(t, h, models)
	for _, req := range []coordination.PruneRequest{
		{},
		{OlderThan: -time.Hour},
		{OlderThan: time.Nanosecond, Statuses: []string{"running"}},
		{OlderThan: time.Nanosecond, Statuses: []string{"finshed"}},
	} {
		_, err := h.Service.Prune(context.Background(), req)
		if !errors.Is(err, coordination.ErrBadInput) {
			t.Fatalf("%+v: %v, want ErrBadInput", req, err)
		}
		if len(req.Statuses) > 0 && !strings.Contains(err.Error(), "finished, failed, cancelled, interrupted") {
			t.Fatalf("the refusal does not name the statuses: %v", err)
		}
	}
	if ids, _ := h.Store.Sessions(context.Background()); len(ids) != 1 {
		t.Fatalf("a refused prune deleted sessions")
	}
}

// TestAFollowUpOutlivesThePrunedTurnBeforeIt: the turn a kept follow-up
// continues may be pruned; the follow-up still reads, and a next turn
// still carries the pruned turn's task and answer (its setup holds the
// history, copied when it was created).
func TestAFollowUpOutlivesThePrunedTurnBeforeIt(t *testing.T) {
	ctx := context.Background()
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s1 := h.Create(coordination.TeamSpec{Models: models, Task: "Name a colour"})
	b := coordtest.Alias(s1, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("red"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("blue"), coordtest.Vote(b)}
	h.Run(s1.ID)
	time.Sleep(300 * time.Millisecond)
	s2 := h.Create(coordination.TeamSpec{ContinueFrom: s1.ID, Task: "Now a darker one"})
	a := coordtest.Alias(s2, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("navy"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("maroon"), coordtest.Vote(a)}
	h.Run(s2.ID)

	rep, err := h.Service.Prune(ctx, coordination.PruneRequest{OlderThan: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := pruned(rep); !slices.Equal(got, []string{s1.ID}) {
		t.Fatalf("deleted %v, want the first turn only", got)
	}
	v, err := h.Service.Status(ctx, s2.ID)
	if err != nil || v.Previous != s1.ID || v.Result.Status != coordination.StatusFinished {
		t.Fatalf("the follow-up after its previous turn was pruned: %+v, %v", v, err)
	}
	s3 := h.Create(coordination.TeamSpec{ContinueFrom: s2.ID, Task: "One more"})
	if len(s3.History) != 2 || s3.History[0].SessionID != s1.ID || s3.History[0].Answer != "blue" || s3.History[1].Answer != "navy" {
		t.Fatalf("turn 3's history lost the pruned turn: %+v", s3.History)
	}
}

// stepAfterLook starts a step of one session's agent_a just after the
// prune's first look found none in flight (its derivation's read of the
// step locks, then its own).
type stepAfterLook struct {
	*memstore.Store
	id    string
	mu    sync.Mutex
	looks int
	held  coordination.StepLock
}

func (s *stepAfterLook) InFlight(ctx context.Context, id string) (map[string]bool, error) {
	m, err := s.Store.InFlight(ctx, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == s.id {
		if s.looks++; s.looks == 2 {
			s.held, _ = s.Store.LockStep(ctx, id, "agent_a")
		}
	}
	return m, err
}

// TestAStepStartedAfterThePrunesLookKeepsTheSession: a step that takes
// its lock between the prune's first look and its locked check keeps the
// session, reported as kept.
func TestAStepStartedAfterThePrunesLookKeepsTheSession(t *testing.T) {
	ctx := context.Background()
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	id := cancelledSession(t, h, models)
	st := &stepAfterLook{Store: h.Store, id: id}
	svc := coordination.NewService(st, coordination.Options{Open: h.Open})
	time.Sleep(20 * time.Millisecond)
	rep, err := svc.Prune(ctx, coordination.PruneRequest{OlderThan: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if st.held == nil {
		t.Fatal("the step never started")
	}
	defer st.held.Release()
	if len(rep.Deleted) != 0 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "in flight") {
		t.Fatalf("deleted %v, kept %+v; want the session kept for its step", pruned(rep), rep.Skipped)
	}
	if _, err := h.Store.Session(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// TestASessionMadeAgainHereIsReadWithItsOwnSetup: this service keeps the
// setup of a live session it stepped; another process sharing the store
// cancels and prunes it, and this service creates a session under the same
// id with another task and team. Its status and steps are the new
// session's, not the setup kept of the deleted one.
func TestASessionMadeAgainHereIsReadWithItsOwnSetup(t *testing.T) {
	ctx := context.Background()
	models, scripts, provs := coordtest.Team(t, 3)
	for _, sc := range scripts {
		sc.Replies = []any{coordtest.Answer("an answer")}
	}
	h := coordtest.New(t, provs)
	const id = "reused"
	h.Create(coordination.TeamSpec{SessionID: id, Task: "The old task.", Models: models[:2], Driver: coordination.DriverStep})
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if v, err := h.Service.Status(ctx, id); err != nil || v.Task != "The old task." {
		t.Fatalf("the live session's status: %+v, %v", v, err)
	}
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	if _, err := other.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	pruner := coordination.NewService(h.Store, coordination.Options{Open: h.Open, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
	if rep, err := pruner.Prune(ctx, coordination.PruneRequest{OlderThan: 24 * time.Hour}); err != nil || len(rep.Deleted) != 1 {
		t.Fatalf("the other process's prune: %+v, %v; want the session deleted", rep, err)
	}
	h.Create(coordination.TeamSpec{SessionID: id, Task: "The new task.", Models: models, Driver: coordination.DriverStep})
	v, err := h.Service.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.Task != "The new task." || len(v.Agents) != 3 {
		t.Errorf("the session made again reads as task %q with %d agents; want the new task with 3", v.Task, len(v.Agents))
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: id, AgentID: "agent_c"}); err != nil {
		t.Errorf("a step of the new session's agent_c: %v", err)
	}
}
