package coordination_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/rs/zerolog"
)

// TestACancelledSessionsDurationStopsAtItsCancel: a cancelled session's
// duration_seconds stops when it was cancelled — the cancel its stopped
// run recorded, not a cancel asked for again later — on every reader
// (Result, Status, Inspect, Sessions, ListSessions: team_status, status,
// sessions and the web view), however long it stands cancelled. Run
// again, it counts again (its age), and stops again at the next cancel.
// It used to read its age on every look: 7 s, then 57 s, then 207 s.
func TestACancelledSessionsDurationStopsAtItsCancel(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{at: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	calls := make(chan struct{}, 16)
	provs := map[string]providers.Provider{}
	var models []string
	for i := range 2 {
		sp, err := providers.ParseSpec("sim:seed=" + string(rune('1'+i)))
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, sp.String())
		provs[sp.String()] = untilCancelled{calls}
	}
	h := &coordtest.Harness{T: t, Store: memstore.New(), Providers: provs}
	svc := coordination.NewService(h.Store, coordination.Options{Open: h.Open, Now: clock.now, Logger: zerolog.Nop()})
	h.Service = svc
	s := h.Create(coordination.TeamSpec{Task: "What is 2+2?", Models: models})

	run := func() {
		t.Helper()
		if _, _, err := svc.Start(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		for range 2 { // both agents are in their model call
			select {
			case <-calls:
			case <-time.After(10 * time.Second):
				t.Fatal("the run's agents never called their models")
			}
		}
	}
	cancel := func() {
		t.Helper()
		if res, err := svc.Cancel(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
			t.Fatalf("Cancel = %v, %v; want cancelled", res, err)
		}
	}

	run()
	clock.add(7 * time.Second)
	cancel() // the run records its cancel as it stops, then Cancel one more
	durationsAre(t, svc, s.ID, coordination.StatusCancelled, 7, "just cancelled")
	clock.add(50 * time.Second)
	durationsAre(t, svc, s.ID, coordination.StatusCancelled, 7, "50 s after its cancel")
	cancel() // asked again: it stopped nothing
	clock.add(150 * time.Second)
	durationsAre(t, svc, s.ID, coordination.StatusCancelled, 7, "after a second cancel, 200 s after the first")
	if n := cancels(h.Ledger(s.ID)); n < 3 {
		t.Fatalf("the session log holds %d cancels; want the run's, Cancel's and the second Cancel's", n)
	}

	// Run again: it counts again, from its creation (duration is the
	// session's age while it runs, as a finished one's is its age at the
	// end), and stops at the next cancel.
	run()
	durationsAre(t, svc, s.ID, coordination.StatusRunning, 207, "resumed")
	clock.add(3 * time.Second)
	durationsAre(t, svc, s.ID, coordination.StatusRunning, 210, "running again for 3 s")
	cancel()
	clock.add(90 * time.Second)
	durationsAre(t, svc, s.ID, coordination.StatusCancelled, 210, "cancelled again, 90 s later")
}

// TestAStepDrivenSessionCancelledStopsCounting: a step-driven session,
// which no run stops, is stopped by the cancel recorded for it; stepped
// again, it runs and counts again.
func TestAStepDrivenSessionCancelledStopsCounting(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{at: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.NewWith(t, provs, coordination.Options{Now: clock.now, Logger: zerolog.Nop()})
	svc := h.Service
	s := h.Create(coordination.TeamSpec{Task: "What is 2+2?", Models: models, Driver: coordination.DriverStep})
	clock.add(5 * time.Second)
	if res, err := svc.Cancel(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
		t.Fatalf("Cancel = %v, %v; want cancelled", res, err)
	}
	clock.add(5 * time.Second)
	durationsAre(t, svc, s.ID, coordination.StatusCancelled, 5, "5 s after its cancel")
	clock.add(20 * time.Second)
	sc[0].Replies = []any{coordtest.Answer("4")}
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: s.AgentIDs()[0]}); err != nil {
		t.Fatal(err)
	}
	clock.add(2 * time.Second)
	durationsAre(t, svc, s.ID, coordination.StatusRunning, 32, "stepped again")
}

// durationsAre checks that every reader of a session says it is status
// with a duration of want seconds.
func durationsAre(t *testing.T, svc *coordination.Service, id, status string, want float64, when string) {
	t.Helper()
	ctx := context.Background()
	got := map[string][2]any{}
	res, err := svc.Result(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got["Result"] = [2]any{res.Status, res.Duration}
	v, err := svc.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got["Status"] = [2]any{v.Result.Status, v.Result.Duration}
	if v, err = svc.Inspect(ctx, id); err != nil {
		t.Fatal(err)
	}
	got["Inspect"] = [2]any{v.Result.Status, v.Result.Duration}
	all, err := svc.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range all {
		if sum.SessionID == id {
			got["Sessions"] = [2]any{sum.Status, sum.Duration}
		}
	}
	page, err := svc.ListSessions(ctx, coordination.SessionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range page.Sessions {
		if sum.SessionID == id {
			got["ListSessions"] = [2]any{sum.Status, sum.Duration}
		}
	}
	for _, reader := range []string{"Result", "Status", "Inspect", "Sessions", "ListSessions"} {
		if g, ok := got[reader]; !ok || g[0] != status || g[1] != want {
			t.Errorf("%s: %s reads %v; want %s, %v s", when, reader, g, status, want)
		}
	}
}

func cancels(l *coordination.Ledger) int {
	n := 0
	for _, e := range l.Session {
		if e.Kind == coordination.SessionCancelled {
			n++
		}
	}
	return n
}

// fakeClock is a service's clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// untilCancelled is a model whose every call says it began, then waits
// for its cancel.
type untilCancelled struct{ began chan<- struct{} }

func (p untilCancelled) Step(ctx context.Context, _ providers.Request) (providers.Action, providers.Usage, error) {
	p.began <- struct{}{}
	<-ctx.Done()
	return providers.Action{}, providers.Free(), context.Cause(ctx)
}
