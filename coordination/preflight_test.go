package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
)

// checked is a service whose pre-flight answers from a table by model.
func checked(t *testing.T, provs map[string]providers.Provider, verdict map[string]error) (*coordination.Service, *memstore.Store, *int) {
	h := coordtest.New(t, provs)
	asked := 0
	svc := coordination.NewService(h.Store, coordination.Options{Open: h.Open, Parallel: 8,
		CheckModels: func(ctx context.Context, specs []providers.Spec) []error {
			asked++
			errs := make([]error, len(specs))
			for i, sp := range specs {
				errs[i] = verdict[sp.String()]
			}
			return errs
		}})
	return svc, h.Store, &asked
}

func TestAModelItsProviderDoesNotListRefusesTheTeamBeforeAnyStep(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 3)
	svc, store, asked := checked(t, provs, map[string]error{
		models[1]: &providers.ModelNotFoundError{Backend: "openai", Model: "gpt-5-mni", Listed: 9, Closest: []string{"gpt-5-mini"}},
	})
	_, err := svc.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: models})
	if !errors.Is(err, providers.ErrModelNotFound) || !errors.Is(err, coordination.ErrBadSpec) ||
		!strings.Contains(err.Error(), "agent agent_b (") || !strings.Contains(err.Error(), "did you mean openai/gpt-5-mini") {
		t.Fatalf("got %v", err)
	}
	if *asked != 1 {
		t.Errorf("asked %d times", *asked)
	}
	if ids, _ := store.Sessions(t.Context()); len(ids) != 0 {
		t.Errorf("a refused team wrote %v", ids)
	}
	for _, s := range scripts {
		if len(s.Requests()) != 0 {
			t.Error("a model was called")
		}
	}
}

func TestARefusedKeyLeavesTheAgentOutWhileTwoRemain(t *testing.T) {
	models, _, provs := coordtest.Team(t, 3)
	refused := &providers.Error{Class: providers.ClassAuth, Status: 401, Message: "HTTP 401: invalid x-api-key (check ANTHROPIC_API_KEY)"}
	svc, _, _ := checked(t, provs, map[string]error{models[0]: refused})
	s, err := svc.Create(t.Context(), coordination.TeamSpec{Task: "What is 2+2?", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Agents) != 2 || s.Agents[0].ID != "agent_b" || len(s.Aliases) != 2 {
		t.Fatalf("agents %+v anon %v", s.Agents, s.Aliases)
	}
	if len(s.Dropped) != 1 || s.Dropped[0].Class != "auth" || !strings.Contains(s.Dropped[0].Message, "401") {
		t.Fatalf("dropped %+v", s.Dropped)
	}
	res, err := svc.Run(t.Context(), s.ID, nil)
	if err != nil || res.Status != coordination.StatusFinished || len(res.Dropped) != 1 || res.Degraded {
		t.Fatalf("%v: %+v", err, res)
	}
	// Strict refuses, and so does a team that would keep one agent.
	for _, spec := range []coordination.TeamSpec{
		{Task: "x", Models: models, Rules: coordination.Rules{Strict: true}},
		{Task: "x", Models: models[:2]},
	} {
		if _, err := svc.Create(t.Context(), spec); !errors.Is(err, coordination.ErrKeyRefused) || providers.ClassOf(err) != providers.ClassAuth {
			t.Errorf("%+v: %v", spec.Rules, err)
		}
	}
}

// Keys the providers refuse are told all at once too, before any step.
func TestEveryRefusedKeyIsToldAtOnce(t *testing.T) {
	models, _, provs := coordtest.Team(t, 3)
	svc, store, _ := checked(t, provs, map[string]error{
		models[0]: &providers.Error{Class: providers.ClassAuth, Status: 401, Message: "HTTP 401: invalid x-api-key (check ANTHROPIC_API_KEY)"},
		models[2]: &providers.Error{Class: providers.ClassAuth, Status: 400, Message: "HTTP 400: API key not valid (check GEMINI_API_KEY)"},
	})
	_, err := svc.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: models})
	if !errors.Is(err, coordination.ErrKeyRefused) || providers.ClassOf(err) != providers.ClassAuth {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"2 agents' keys were refused", "agent agent_a (" + models[0] + "): HTTP 401", "agent agent_c (" + models[2] + "): HTTP 400"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%v", want, err)
		}
	}
	if ids, _ := store.Sessions(t.Context()); len(ids) != 0 {
		t.Errorf("a refused team wrote %v", ids)
	}
}
