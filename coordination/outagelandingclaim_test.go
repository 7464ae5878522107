package coordination_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// splitDownStore is unreachable for the session lock (a step's landing)
// while landDown is set, and for run lease renewals (the heartbeat) while
// beatDown is set: a database that went away and came back, the
// heartbeat's next beat not yet due (or its own pool not yet reconnected).
type splitDownStore struct {
	*memstore.Store
	landDown, beatDown atomic.Bool
}

func (s *splitDownStore) LockSession(ctx context.Context, id string) (func(), error) {
	if s.landDown.Load() {
		return nil, errDown
	}
	return s.Store.LockSession(ctx, id)
}

func (s *splitDownStore) RenewRun(ctx context.Context, id string, v int64, ttl time.Duration) (coordination.RunLease, error) {
	if s.beatDown.Load() {
		return coordination.RunLease{}, errDown
	}
	return s.Store.RenewRun(ctx, id, v, ttl)
}

// A step whose landing waited out an outage longer than the run's lease
// (Service.throughOutage, inside the step) returns to the run loop as a
// plain landing: the loop never paused, yet another replica claimed the run
// meanwhile. The loop confirms its claim before launching from that landing
// (runClaim.confirm) and stops, lease lost, launching nothing. Before, it
// launched the next agent's paid model call, whose step landed fenced only
// by its own step lease, until the heartbeat's next beat found the lease
// lost.
func TestALandingThatWaitedOutAnOutageLaunchesNoStepOnceTheRunWasClaimed(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	inStep, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	inner := provs[models[0]]
	provs[models[0]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if first.CompareAndSwap(false, true) {
			close(inStep)
			<-release
		}
		return inner.Step(ctx, req)
	})
	var claimed atomic.Bool
	var callsAfterClaim atomic.Int32
	innerB := provs[models[1]]
	provs[models[1]] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if claimed.Load() {
			callsAfterClaim.Add(1)
		}
		return innerB.Step(ctx, req)
	})
	st := &splitDownStore{Store: memstore.New()}
	open := func(sp providers.Spec) (providers.Provider, error) {
		if p, ok := provs[sp.String()]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("no test provider for %s", sp)
	}
	svc := coordination.NewService(st, coordination.Options{Open: open, Logger: zerolog.Nop(), Parallel: 1,
		RunHeartbeat: time.Second, RunLeaseTTL: 2 * time.Second})
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	a := coordtest.Alias(s, "agent_a")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(a)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(a)}
	r, _, err := svc.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-inStep // agent_a's model call is under way
	st.landDown.Store(true)
	st.beatDown.Store(true)
	close(release) // its reply is in; its landing meets the outage and waits

	var b coordination.RunLease
	deadline := time.Now().Add(10 * time.Second)
	for { // another replica claims the run once its lease ran out
		b, err = st.Store.AcquireRun(ctx, s.ID, coordination.LeaseOwner{ID: "replica-b", Host: "elsewhere", PID: 2}, time.Hour)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's lease never ran out: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	claimed.Store(true)
	st.landDown.Store(false) // the database answers: agent_a's landing goes through

	time.Sleep(4 * time.Second) // the landing's next try is at most 3 s away
	st.beatDown.Store(false)
	_, _ = r.Result()
	<-r.Done()
	if n := callsAfterClaim.Load(); n > 0 {
		t.Errorf("the run launched %d model call(s) of agent_b after replica-b claimed its session (version %d)", n, b.Version)
	}
	l, err := st.Store.Ledger(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Agents["agent_b"] {
		t.Errorf("agent_b's step %d (%s) landed in the session replica-b holds", e.Step, e.Kind)
	}
}
