package coordination_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// goneCreatorStore names as the creator of the sessions it creates this
// process started at another time: a pid reused, its creator gone.
type goneCreatorStore struct{ *memstore.Store }

func (g goneCreatorStore) Create(ctx context.Context, s *coordination.Session) error {
	if s.Creator != nil {
		c := *s.Creator
		c.ProcStart++
		s.Creator = &c
	}
	return g.Store.Create(ctx, s)
}

// readyGate holds a SetReady naming a new creator until open is closed,
// telling it began (in); lockSeen is closed at its first LockSession.
type readyGate struct {
	*memstore.Store
	in, open chan struct{}
	lockSeen chan struct{}
	once     sync.Once
}

func (g *readyGate) SetReady(ctx context.Context, id string, at time.Time, by *coordination.Creator) error {
	if by != nil && g.open != nil {
		close(g.in)
		<-g.open
	}
	return g.Store.SetReady(ctx, id, at, by)
}

func (g *readyGate) LockSession(ctx context.Context, id string) (func(), error) {
	if g.lockSeen != nil {
		g.once.Do(func() { close(g.lockSeen) })
	}
	return g.Store.LockSession(ctx, id)
}

// Two processes asked again at once for a team whose creator is gone
// (run_team{session_id} retried on two servers) must not both take its
// creation over: the second decides under the session lock, after the
// first named itself the creator, and finds a live creator. Before, both
// took it over (each read the dead creator before either wrote), each
// counted it as created for its own run, and the one refused a slot
// recorded it cancelled ("not started") just before the other started
// it, whose run that cancel then stopped.
func TestTwoRetriesOfADeadCreatorsRunTakeItOverOnce(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	models, _, provs := coordtest.Team(t, 2)
	h := &coordtest.Harness{T: t, Providers: provs}
	seed := int64(1)
	spec := coordination.TeamSpec{SessionID: "retried_twice", Task: "What is 2+2?", Models: models, Seed: &seed}
	if _, err := coordination.NewService(goneCreatorStore{st}, coordination.Options{Open: h.Open}).Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	reader := coordination.NewService(st, coordination.Options{Parallel: 2, Open: h.Open})
	if v, err := reader.Status(ctx, spec.SessionID); err != nil || v.Result.Status != coordination.StatusInterrupted {
		t.Skipf("its creator dead, the session reads %v (%v), not interrupted: this host cannot tell a creator dead", v, err)
	}

	aStore := &readyGate{Store: st, in: make(chan struct{}), open: make(chan struct{})}
	bStore := &readyGate{Store: st, lockSeen: make(chan struct{})}
	a := coordination.NewService(aStore, coordination.Options{Parallel: 2, Open: h.Open})
	b := coordination.NewService(bStore, coordination.Options{Parallel: 2, Open: h.Open})
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() { _, err := a.Create(ctx, spec); aDone <- err }()
	<-aStore.in // a is writing itself in as the creator
	go func() { _, err := b.Create(ctx, spec); bDone <- err }()
	select {
	case <-bStore.lockSeen: // b has read the session and decided
	case <-time.After(10 * time.Second):
		t.Fatal("the second retry never asked for the session lock")
	}
	close(aStore.open)
	for name, done := range map[string]chan error{"first": aDone, "second": bDone} {
		if err := <-done; err != nil {
			t.Fatalf("the %s retried creation: %v", name, err)
		}
	}

	full := func(context.Context) (func(), error) { return nil, errors.New("at the limit of running teams") }
	if _, _, err := b.StartOrFollow(ctx, spec.SessionID, full, false); err == nil {
		t.Fatal("a start refused its slot started")
	}
	if v, err := reader.Status(ctx, spec.SessionID); err != nil || v.Result.Status != coordination.StatusRunning {
		t.Errorf("the second retry refused a slot while the first starts the run: %v (%v); want running", v.Result.Status, err)
	}
	res, err := a.Run(ctx, spec.SessionID, nil)
	if err != nil || res.Status != coordination.StatusFinished {
		st := ""
		if res != nil {
			st = res.Status
		}
		t.Errorf("the first retry's run ended %q (%v), want finished", st, err)
	}
}
