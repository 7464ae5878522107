package coordination_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestFollowJoinsARunHeldElsewhere: a second service on the same store (as
// another process or replica is) cannot start a run the first holds; it
// follows it instead, and its Run ends with the holder's result.
func TestFollowJoinsARunHeldElsewhere(t *testing.T) {
	h, s, gate := gatedTeam(t)
	elsewhere := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	ctx := context.Background()
	held, started, err := h.Service.Start(ctx, s.ID)
	if err != nil || !started {
		t.Fatalf("Start = %v, %v", started, err)
	}
	if _, _, err := elsewhere.Start(ctx, s.ID); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("Start on the other service = %v, want ErrSessionRunning", err)
	}
	followed, err := elsewhere.Follow(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-followed.Done():
		t.Fatal("the followed run ended while the holder's run goes on")
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	res, err := followed.Result()
	if err != nil || res.Status != coordination.StatusFinished || res.Winner == nil || res.Winner.AgentID != "agent_b" {
		t.Fatalf("the followed run's result = %s, %v; want the holder's agent_b, finished", coordtest.JSON(res), err)
	}
	if own, _ := held.Result(); own.Status != coordination.StatusFinished {
		t.Fatalf("the holder's run = %s", coordtest.JSON(own))
	}
	if _, err := elsewhere.Follow(ctx, "missing"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("Follow of a missing session = %v, want ErrSessionNotFound", err)
	}
}

// gatedTeam is a two-agent team whose models answer (agent_a "four",
// agent_b "4", both then voting for agent_b) once gate is closed.
func gatedTeam(t *testing.T) (*coordtest.Harness, *coordination.Session, chan struct{}) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 2)
	gate := make(chan struct{})
	for m, p := range provs {
		provs[m] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			select {
			case <-gate:
			case <-ctx.Done():
				return providers.Action{}, providers.Usage{}, ctx.Err()
			}
			return p.Step(ctx, req)
		})
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b)}
	return h, s, gate
}
