package coordination_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

func TestQueriesListSessionsEventsAndAnswersWithoutDeciding(t *testing.T) {
	ctx := context.Background()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	if list, err := svc.Sessions(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("empty store: %v %v", list, err)
	}
	done, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/strong", "sim/strong"}, SessionID: "done"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, done.ID, nil)
	if err != nil || res.Winner == nil {
		t.Fatalf("run: %v %+v", err, res)
	}
	if _, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 6 * 7?", Models: []string{"sim", "host"}, SessionID: "stepped", Driver: coordination.DriverStep}); err != nil {
		t.Fatal(err)
	}

	list, err := svc.Sessions(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions: %v %+v", err, list)
	}
	for _, s := range list {
		switch s.SessionID {
		case "done":
			if s.Status != coordination.StatusFinished || s.Winner == nil || s.Driver != coordination.DriverRun {
				t.Errorf("done: %+v", s)
			}
		case "stepped":
			if s.Status != coordination.StatusRunning || s.Driver != coordination.DriverStep || !reflect.DeepEqual(s.Agents, []string{"agent_a", "agent_b"}) {
				t.Errorf("stepped: %+v", s)
			}
		}
	}

	evs, err := svc.Events(ctx, "done")
	if err != nil || len(evs) == 0 || evs[0].Type != "session_created" {
		t.Errorf("events: %v %+v", err, evs)
	}
	if _, err := svc.Events(ctx, "nope"); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("events of an unknown session: %v", err)
	}

	a, err := svc.Answer(ctx, "done", res.Winner.Label)
	if err != nil || a.Content != *res.FinalAnswer || !a.Latest || a.AgentID != res.Winner.AgentID {
		t.Errorf("winning answer: %v %+v", err, a)
	}
	if _, err := svc.Answer(ctx, "done", "agent9.9"); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("unknown label: %v", err)
	}
}
