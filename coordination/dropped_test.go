package coordination_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// notFound is what a provider says of a typo'd model.
func notFound() error {
	return &providers.Error{Class: providers.ClassProvider, Status: 404, Message: "HTTP 404: The model `gpt-5-mni` does not exist"}
}

func TestATeamThatBecameOneModelSaysWhoDroppedAndIsDegraded(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	scripts[0].Replies = []any{notFound(), notFound()}
	scripts[1].Replies = []any{coordtest.Answer("4")}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished || coordination.Deref(res.HowChosen) != coordination.ChosenSingleAgent {
		t.Fatalf("status %s how %s", res.Status, coordination.Deref(res.HowChosen))
	}
	if !res.Degraded {
		t.Error("a team of two in which one agent answered must be degraded")
	}
	if len(res.Dropped) != 1 {
		t.Fatalf("dropped %+v", res.Dropped)
	}
	d := res.Dropped[0]
	if d.AgentID != "agent_a" || d.Model != models[0] || d.Class != string(providers.ClassProvider) || !strings.Contains(d.Message, "does not exist") {
		t.Errorf("dropped %+v", d)
	}
	sum := report.Summary(res)
	for _, want := range []string{"DEGRADED: only 1 agent of a team of 2 ever answered", "Dropped: agent_a (" + models[0] + ") — provider: HTTP 404"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Index(sum, "DEGRADED") > strings.Index(sum, "Winner:") {
		t.Errorf("the degraded line must come before the winner:\n%s", sum)
	}
	// The stored result says the same.
	stored, err := h.Service.Status(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !stored.Result.Degraded || len(stored.Result.Dropped) != 1 {
		t.Errorf("stored result %+v", stored.Result)
	}
}

func TestAHealthyTeamIsNotDegradedAndDropsNobody(t *testing.T) {
	models, _, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	res := h.Run(h.Create(coordination.TeamSpec{Models: models}).ID)
	if res.Degraded || res.Dropped == nil || len(res.Dropped) != 0 {
		t.Errorf("degraded %v dropped %#v", res.Degraded, res.Dropped)
	}
	if strings.Contains(report.Summary(res), "DEGRADED") || strings.Contains(report.Summary(res), "Dropped:") {
		t.Errorf("summary:\n%s", report.Summary(res))
	}
}

func TestAOneAgentTeamIsNeverDegraded(t *testing.T) {
	models, _, provs := coordtest.Team(t, 1)
	h := coordtest.New(t, provs)
	if res := h.Run(h.Create(coordination.TeamSpec{Models: models}).ID); res.Degraded {
		t.Error("a team of one asked for one model")
	}
}

func TestStrictFailsTheRunWhenAnAgentDrops(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 3)
	scripts[0].Replies = []any{notFound(), notFound()}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Strict: true}})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFailed || res.Winner != nil || coordination.Deref(res.StopReason) != coordination.StopAgentsFailed {
		t.Fatalf("status %s winner %+v stop %s", res.Status, res.Winner, coordination.Deref(res.StopReason))
	}
	if len(res.Dropped) != 1 || res.Dropped[0].AgentID != "agent_a" {
		t.Errorf("dropped %+v", res.Dropped)
	}
	// Without strict the other two carry on and decide.
	scripts2 := []*coordtest.Scripted{{Replies: []any{notFound(), notFound()}}, {}, {}}
	for i, m := range models {
		provs[m] = scripts2[i]
	}
	res = h.Run(h.Create(coordination.TeamSpec{Models: models}).ID)
	if res.Status != coordination.StatusFinished || res.Degraded {
		t.Errorf("non-strict: status %s degraded %v", res.Status, res.Degraded)
	}
}

func TestStrictFailsADegradedFinish(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	scripts[0].Replies = []any{notFound(), notFound()}
	h := coordtest.New(t, provs)
	// max_agent_failures 3: agent_a is never dropped within its 2 steps, so
	// only the degraded finish can fail the run.
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Strict: true, MaxRounds: 2, MaxAgentFailures: 3}})
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFailed || res.FinalAnswer != nil || !res.Degraded {
		t.Fatalf("status %s final %v degraded %v", res.Status, res.FinalAnswer, res.Degraded)
	}
}

// keyless opens like backends.Open for a backend whose key is not set.
func keyless(backend string) error {
	return &keys.MissingKeyError{Backend: backend, Vars: []string{"ANTHROPIC_API_KEY"}, What: "an API key"}
}

func TestKeylessAgentsAreLeftOutWhileTwoRemain(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	open := h.Open
	h.Service = coordination.NewService(h.Store, coordination.Options{Parallel: 8, Open: func(sp providers.Spec) (providers.Provider, error) {
		if sp.Backend == "claude" {
			return nil, keyless("claude")
		}
		return open(sp)
	}})
	team := []string{models[0], "claude/claude-haiku-4-5", models[1]}
	s := h.Create(coordination.TeamSpec{Models: team})
	if len(s.Agents) != 2 || s.Agents[0].ID != "agent_a" || s.Agents[1].ID != "agent_c" {
		t.Fatalf("agents %+v", s.Agents)
	}
	if len(s.Dropped) != 1 || s.Dropped[0].AgentID != "agent_b" || s.Dropped[0].Class != coordination.ClassMissingKey || !strings.Contains(s.Dropped[0].Message, "ANTHROPIC_API_KEY") {
		t.Fatalf("dropped %+v", s.Dropped)
	}
	res := h.Run(s.ID)
	if len(res.Dropped) != 1 || res.Dropped[0].AgentID != "agent_b" || res.Degraded {
		t.Errorf("result dropped %+v degraded %v", res.Dropped, res.Degraded)
	}

	// Strict refuses instead, and so does a team that would keep only one.
	for _, spec := range []coordination.TeamSpec{
		{Models: team, Rules: coordination.Rules{Strict: true}},
		{Models: []string{models[0], "claude/claude-haiku-4-5"}},
	} {
		spec.Task = "What is 2+2?"
		_, err := h.Service.Create(t.Context(), spec)
		if !errors.Is(err, keys.ErrMissingKey) || !errors.Is(err, coordination.ErrBadSpec) {
			t.Errorf("%v: got %v", spec.Models, err)
		}
	}
}

func TestSeedsStayWithin53Bits(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	for i := 0; i < 50; i++ {
		s, err := h.Service.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: models})
		if err != nil {
			t.Fatal(err)
		}
		if s.Seed < 0 || s.Seed > coordination.MaxSeed {
			t.Fatalf("seed %d is beyond 2^53-1", s.Seed)
		}
	}
	for _, seed := range []int64{coordination.MaxSeed + 1, -coordination.MaxSeed - 1, 7137183372773921802} {
		_, err := h.Service.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: models, Seed: &seed})
		if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "2^53-1") {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	ok := int64(coordination.MaxSeed)
	if _, err := h.Service.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: models, Seed: &ok}); err != nil {
		t.Error(err)
	}
}

// A team refused for its keys names every missing one at once, before
// anything is written or called: told one at a time, a user sets a key,
// runs again and only then hears of the next.
func TestEveryMissingKeyIsToldAtOnceBeforeAnySpend(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 1)
	h := coordtest.New(t, provs)
	open := h.Open
	svc := coordination.NewService(h.Store, coordination.Options{Parallel: 8, Open: func(sp providers.Spec) (providers.Provider, error) {
		switch sp.Backend {
		case "claude":
			return nil, keyless("claude")
		case "gemini":
			return nil, &keys.MissingKeyError{Backend: "gemini", Vars: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, What: "an API key"}
		}
		return open(sp)
	}})
	for _, spec := range []coordination.TeamSpec{
		{Models: []string{"claude/claude-haiku-4-5", models[0], "gemini/gemini-2.5-flash"}},                                                     // one would be left
		{Models: []string{"claude/claude-haiku-4-5", models[0], "gemini/gemini-2.5-flash", models[0]}, Rules: coordination.Rules{Strict: true}}, // strict
	} {
		spec.Task = "What is 2+2?"
		_, err := svc.Create(t.Context(), spec)
		var mk *keys.MissingKeyError
		if !errors.Is(err, keys.ErrMissingKey) || !errors.Is(err, coordination.ErrBadSpec) || !errors.As(err, &mk) {
			t.Fatalf("%v: got %v", spec.Models, err)
		}
		msg := err.Error()
		for _, want := range []string{"2 agents have no key here", "agent agent_a (claude/claude-haiku-4-5): claude needs an API key: set ANTHROPIC_API_KEY",
			"agent agent_c (gemini/gemini-2.5-flash): gemini needs an API key: set GOOGLE_API_KEY or GEMINI_API_KEY"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: the refusal lacks %q:\n%s", spec.Models, want, msg)
			}
		}
	}
	if ids, _ := h.Store.Sessions(t.Context()); len(ids) != 0 {
		t.Errorf("a refused team wrote %v", ids)
	}
	if len(scripts[0].Requests()) != 0 {
		t.Error("a model was called")
	}
	// One missing key reads as it always did.
	_, err := svc.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: []string{"claude/claude-haiku-4-5", models[0]}})
	if want := "agent agent_a (claude/claude-haiku-4-5): claude needs an API key"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("one missing key: got %v, want it to start %q", err, want)
	}
}
