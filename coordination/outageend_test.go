package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// An outage the store came back from ends in the session's timeline (a
// store_outage event) whatever the operation tried again then met: one
// that failed for another reason once the store answered (a statement
// refused, a lease claimed elsewhere) left the timeline with an
// outage that began and never ended, and the progress's last store_outage
// message saying the run "waits and tries again".

// outageEnds is the session's store_outage events that say the outage of
// who (e.g. "the run") ended: the store answered again.
func outageEnds(t *testing.T, svc *coordination.Service, id, who string) []string {
	t.Helper()
	v, err := svc.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, e := range v.Timeline {
		if e.Type == "store_outage" && strings.Contains(e.Message, "; "+who+" waited") {
			ends = append(ends, e.Message)
		}
	}
	return ends
}

// refusingStore is a downStore that, once it answers again, refuses the
// next session lock once (refuseNext), as a database that is back but
// turns a statement down (a permission taken away, a statement timeout).
type refusingStore struct {
	downStore
	refuseNext atomic.Bool
}

var errRefused = errors.New("test: permission denied for table session_entries")

func (s *refusingStore) LockSession(ctx context.Context, id string) (func(), error) {
	if !s.down.Load() && s.refuseNext.CompareAndSwap(true, false) {
		return nil, errRefused
	}
	return s.downStore.LockSession(ctx, id)
}

// TestAStepWhoseLandingFailsOnceTheStoreIsBackEndsItsOutage: a step's
// landing meets the store unreachable and waits (throughOutage); the store
// answers again but refuses the landing (a non-outage error). The timeline
// says the outage ended and that the step stopped, and why, not that it
// went on.
func TestAStepWhoseLandingFailsOnceTheStoreIsBackEndsItsOutage(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inStep, release := make(chan struct{}), make(chan struct{})
	inner := provs[models[0]]
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		close(inStep)
		<-release
		return inner.Step(ctx, req)
	})
	open := func(sp providers.Spec) (providers.Provider, error) {
		if p, ok := provs[sp.String()]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("no test provider for %s", sp)
	}
	st := &refusingStore{downStore: downStore{Store: memstore.New()}}
	svc := coordination.NewService(st, coordination.Options{Open: open, Logger: zerolog.Nop()})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	sc[0].Replies = []any{coordtest.Answer("4")}
	stepped := make(chan error, 1)
	go func() {
		_, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		stepped <- err
	}()
	<-inStep
	st.down.Store(true)
	close(release)                     // the reply is in; its landing meets the outage and waits
	time.Sleep(500 * time.Millisecond) // tries at 0 and 0.2 s, the next at 0.6 s
	st.refuseNext.Store(true)
	st.down.Store(false)
	select {
	case err = <-stepped:
	case <-time.After(10 * time.Second):
		t.Fatal("the step did not end once the store answered")
	}
	if !errors.Is(err, errRefused) {
		t.Fatalf("the step ended with %v; want its landing refused (%v)", err, errRefused)
	}
	ends := outageEnds(t, svc, s.ID, "the step of agent_a")
	if len(ends) != 1 {
		t.Fatalf("the step's landing was refused once the store answered; store_outage events ending its outage %q, want one", ends)
	}
	if strings.Contains(ends[0], "went on") || !strings.Contains(ends[0], "permission denied") {
		t.Errorf("the outage's end %q; want it to say the step stopped, and why (%v), not that it went on", ends[0], errRefused)
	}
	t.Logf("the outage's end: %q", ends[0])
}

// TestARunWhoseLeaseWasClaimedDuringAnOutageEndsItsOutage: the run waits
// out an outage longer than its lease, another replica claims the run
// meanwhile, and the store answers again: the run stops, lease lost, and
// the timeline says the outage ended and the run stopped, not that it went
// on (TestARunWhoseLeaseWasClaimedDuringAnOutageStartsNoStep's setup).
func TestARunWhoseLeaseWasClaimedDuringAnOutageEndsItsOutage(t *testing.T) {
	st := &downStore{Store: memstore.New()}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(),
		RunHeartbeat: 1300 * time.Millisecond, RunLeaseTTL: 2600 * time.Millisecond})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for { // the lease expires 2.6 s after its claim, by the store's clock
		_, err = st.Store.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "replica-b", Host: "elsewhere", PID: 2}, time.Hour)
		if err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.down.Store(false)
	if _, err = r.Result(); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("the run ended with %v, want its lease lost", err)
	}
	<-r.Done()
	ends := outageEnds(t, svc, s.ID, "the run")
	if len(ends) != 1 {
		t.Fatalf("the run stopped, lease lost, once the store answered; store_outage events ending its outage %q, want one", ends)
	}
	if strings.Contains(ends[0], "went on") {
		t.Errorf("the outage's end %q says the run went on; it stopped, lease lost", ends[0])
	}
	t.Logf("the outage's end: %q", ends[0])
}
