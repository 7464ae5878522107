package coordtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// CancelKept plays the rule "a cancel acknowledged is a cancel kept"
// (docs/DESIGN.md, "Cancel from another process") between two services:
// one runs the team over runner, the other cancels it over canceller, two
// stores of one shared record (two processes on one state directory, two
// replicas on one database) or one memory store. Each interleaving is
// forced, not hoped for:
//   - a reply that arrives after the cancel was acknowledged is not recorded,
//     and the run ends cancelled;
//   - a run asked for before a cancel, and still starting when it lands
//     (held in its run lock), does not lift it, whether it was a new run or
//     the resume of a session cancelled before;
//   - a cancel of a session whose run got to the end first says so (an
//     ErrSessionFinished), never "cancelled".
func CancelKept(t *testing.T, runner, canceller coordination.Store) {
	ctx := context.Background()
	other := coordination.NewService(canceller, coordination.Options{})

	t.Run("a reply after the cancel is not recorded", func(t *testing.T) {
		calling, release := make(chan struct{}, 2), make(chan struct{})
		var once sync.Once
		held := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			calling <- struct{}{}
			// The model has replied and ignores the cancel of its context:
			// the reply reaches the landing just after the cancel did.
			<-release
			u := providers.Free()
			u.Input, u.Output = 10, 5
			return Answer("Answer: 4 from " + req.AgentID), u, nil
		})
		models := []string{"sim:seed=201", "sim:seed=202"}
		provs := map[string]providers.Provider{}
		for _, m := range models {
			sp, _ := providers.ParseSpec(m)
			provs[sp.String()] = held
		}
		h := &Harness{T: t, Providers: provs}
		h.Service = coordination.NewService(runner, coordination.Options{Parallel: 2, Open: h.Open})
		s := create(t, h.Service, models)
		r, _, err := h.Service.Start(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer once.Do(func() { close(release) })
		for range models {
			wait(t, calling, "both agents calling their models")
		}
		res, err := other.Cancel(ctx, s.ID)
		if err != nil || res.Status != coordination.StatusCancelled {
			t.Fatalf("the cancel = %v, %v; want cancelled", status(res), err)
		}
		acked := res.Steps
		once.Do(func() { close(release) })
		done, err := r.Result()
		if err != nil {
			t.Fatalf("the cancelled run: %v", err)
		}
		if done.Status != coordination.StatusCancelled || done.Steps != acked {
			t.Errorf("the run ended %s with %d steps; the cancel was acknowledged at %d steps", done.Status, done.Steps, acked)
		}
		if n := entries(t, runner, s.ID); n != acked {
			t.Errorf("%d steps landed after the cancel was acknowledged", n-acked)
		}
	})

	for _, resume := range []bool{false, true} {
		name := "a new run starting when the cancel lands stops"
		if resume {
			name = "a resume starting when a second cancel lands stops"
		}
		t.Run(name, func(t *testing.T) {
			models, _, provs := Team(t, 2)
			paused := &pausedRunLock{Store: runner, entered: make(chan struct{}), release: make(chan struct{})}
			h := &Harness{T: t, Providers: provs}
			h.Service = coordination.NewService(paused, coordination.Options{Parallel: 2, Open: h.Open})
			s := create(t, h.Service, models)
			if resume {
				if res, err := other.Cancel(ctx, s.ID); err != nil || res.Status != coordination.StatusCancelled {
					t.Fatalf("the first cancel = %v, %v", status(res), err)
				}
			}
			type started struct {
				r   *coordination.Run
				err error
			}
			start := make(chan started, 1)
			go func() {
				r, _, err := h.Service.Start(ctx, s.ID)
				start <- started{r, err}
			}()
			wait(t, paused.entered, "the run taking its run lock")
			res, err := other.Cancel(ctx, s.ID)
			if err != nil || res.Status != coordination.StatusCancelled {
				t.Fatalf("the cancel = %v, %v; want cancelled", status(res), err)
			}
			close(paused.release)
			got := <-start
			if got.err != nil {
				t.Fatal(got.err)
			}
			done, err := got.r.Result()
			if err != nil {
				t.Fatal(err)
			}
			if done.Status != coordination.StatusCancelled || done.Steps != 0 {
				t.Errorf("the run ended %s with %d steps after the cancel was acknowledged", done.Status, done.Steps)
			}
		})
	}

	t.Run("a cancel after the end says it ended", func(t *testing.T) {
		models, _, provs := Team(t, 2)
		h := &Harness{T: t, Providers: provs}
		h.Service = coordination.NewService(runner, coordination.Options{Parallel: 2, Open: h.Open})
		s := create(t, h.Service, models)
		if res := h.Run(s.ID); res.Status != coordination.StatusFinished {
			t.Fatalf("the run = %s", JSON(res))
		}
		res, err := other.Cancel(ctx, s.ID)
		if !errors.Is(err, coordination.ErrSessionFinished) {
			t.Fatalf("the cancel of a finished session = %v, %v; want ErrSessionFinished", status(res), err)
		}
	})
}

// pausedRunLock holds a run in its run lock (the first step of a run's
// start) until released.
type pausedRunLock struct {
	coordination.Store
	entered, release chan struct{}
	once             sync.Once
}

func (p *pausedRunLock) LockRun(ctx context.Context, id string) (func(), error) {
	p.once.Do(func() {
		close(p.entered)
		<-p.release
	})
	return p.Store.LockRun(ctx, id)
}

func create(t *testing.T, svc *coordination.Service, models []string) *coordination.Session {
	t.Helper()
	seed := int64(1)
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 2+2?", Models: models, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func entries(t *testing.T, st coordination.Store, id string) int {
	t.Helper()
	l, err := st.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, es := range l.Agents {
		n += len(es)
	}
	return n
}

func status(res *coordination.TeamResult) string {
	if res == nil {
		return "no result"
	}
	return fmt.Sprintf("%s (%d steps)", res.Status, res.Steps)
}
