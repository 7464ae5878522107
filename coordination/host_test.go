package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

func TestHostDrivesATeamWithViewsAndSeenSteps(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "agent_a", Model: models[0]}, {ID: "agent_b", Model: models[1]}, {ID: "me", Model: "host"},
	}})
	sc[0].Replies = []any{coordtest.Answer("4")}
	sc[1].Replies = []any{coordtest.Answer("four")}

	// Round 0: the host's first view is blind.
	view, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if view.Action != "view" || len(view.View.Actions) != 1 || view.View.Actions[0] != "new_answer" || !strings.Contains(view.View.Prompt, "no answers available yet") {
		t.Fatalf("blind view: %+v", view.View)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "new_answer", Content: "2+2=4"}); !errors.Is(err, coordination.ErrStaleView) {
		t.Fatalf("a submission without seen_steps is refused: %v", err)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "new_answer", Content: "2+2=4", SeenSteps: view.SeenSteps}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	// A server agent cannot take a host action, and a host cannot be run.
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a", Action: "vote", Target: "agent1"}); !errors.Is(err, coordination.ErrNotHost) {
		t.Fatalf("host action for a server agent: %v", err)
	}
	if _, err := h.Service.Run(ctx, s.ID, nil); !errors.Is(err, coordination.ErrHostInRunTeam) {
		t.Fatalf("run_team with a host: %v", err)
	}

	view, err = h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if len(view.View.VoteEnum) != 3 || len(view.View.Actions) != 2 {
		t.Fatalf("second view: %+v", view.View)
	}
	// A second view replaces the first: the old seen_steps are refused.
	old := map[string]int{"agent_a": 0, "agent_b": 0, "me": 1}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "vote", Target: "agent1", SeenSteps: old}); !errors.Is(err, coordination.ErrStaleView) {
		t.Fatalf("outdated seen_steps: %v", err)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "vote", Target: "agent9", SeenSteps: view.SeenSteps}); !errors.Is(err, coordination.ErrBadAction) {
		t.Fatalf("invalid target: %v", err)
	}
	target := coordtest.Alias(s, "agent_a") + ".1"
	res, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "vote", Target: target, Reason: "right", SeenSteps: view.SeenSteps})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != "vote" || res.Stale || res.TargetLabel != target {
		t.Fatalf("vote result %+v", res)
	}
	sc[0].Replies = []any{coordtest.Vote(coordtest.Alias(s, "agent_a"))}
	sc[1].Replies = []any{coordtest.Vote(coordtest.Alias(s, "agent_a"))}
	h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	last, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_b"})
	if err != nil {
		t.Fatal(err)
	}
	if !last.Finished || last.Result.Winner.AgentID != "agent_a" {
		t.Fatalf("the settling step finishes the session: %+v", last)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"}); !errors.Is(err, coordination.ErrSessionFinished) {
		t.Fatalf("stepping a finished session: %v", err)
	}
}

func TestStepRefusesAgentNotDue(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	sc[0].Replies = []any{coordtest.Answer("4")}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if !errors.Is(err, coordination.ErrNotNext) || !strings.Contains(err.Error(), "first answer") || !strings.Contains(err.Error(), "agent_b") {
		t.Fatalf("want the barrier named and who is due: %v", err)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "nobody"}); !errors.Is(err, coordination.ErrAgentNotFound) {
		t.Fatalf("unknown agent: %v", err)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: "nope", AgentID: "agent_a"}); !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

func TestSecondStepForBusyAgentIsRefused(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	slow := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		started <- struct{}{}
		<-release
		return coordtest.Answer("4"), providers.Free(), nil
	})
	models, _, provs := coordtest.Team(t, 2)
	provs[models[0]] = slow
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	done := make(chan error)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		done <- err
	}()
	<-started
	_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if !errors.Is(err, coordination.ErrAgentBusy) {
		t.Fatalf("second step: %v", err)
	}
	st, _ := h.Service.Status(ctx, s.ID)
	if st.Agents[0].Status != "streaming" || st.Agents[0].Next {
		t.Fatalf("in flight shows: %+v", st.Agents[0])
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(h.Ledger(s.ID).Agents["agent_a"]); n != 1 {
		t.Fatalf("one step landed, got %d", n)
	}
}

// Criteria attached by another process (another service over the same
// store) before the first step reach that step's prompt: a setup is cached
// only once the session has a step.
func TestCriteriaAttachedElsewhereReachTheFirstStep(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	if _, err := h.Service.Status(ctx, s.ID); err != nil { // reads the setup
		t.Fatal(err)
	}
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	if err := other.AttachCriteria(ctx, s.ID, []criteria.Item{{ID: "E1", Text: "Show the working", Category: "must"}}); err != nil {
		t.Fatal(err)
	}
	sc[0].Replies = []any{coordtest.Answer("4")}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if p := sc[0].Requests()[0].Prompt; !strings.Contains(p, "Show the working") {
		t.Fatalf("the first step must see the attached criteria:\n%s", p)
	}
}

// endingStore ends the host's request right after its step is appended,
// and, as a database does, refuses writes under an ended context.
type endingStore struct {
	*memstore.Store
	end func()
}

type endingLock struct {
	coordination.StepLock
	end func()
}

func (s endingStore) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	l, err := s.Store.LockStep(ctx, id, agent)
	if err != nil {
		return nil, err
	}
	return endingLock{StepLock: l, end: s.end}, nil
}

func (l endingLock) Append(ctx context.Context, e coordination.Entry) (coordination.Entry, error) {
	got, err := l.StepLock.Append(ctx, e)
	l.end()
	return got, err
}

func (s endingStore) SaveView(ctx context.Context, id, agent string, v coordination.IssuedView) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Store.SaveView(ctx, id, agent, v)
}

// TestAHostsRecordedStepIsMarkedThoughItsRequestEnded: a host's request
// that ends (its client gave up) after its step was appended still marks
// the view used: the step is recorded, and an unmarked view would let the
// same submission, sent again, land a second step.
func TestAHostsRecordedStepIsMarkedThoughItsRequestEnded(t *testing.T) {
	ctx := context.Background()
	rctx, end := context.WithCancel(ctx)
	st := endingStore{Store: memstore.New(), end: end}
	svc := coordination.NewService(st, coordination.Options{})
	s, req := coordtest.HostSubmission(t, svc, svc, "", "4")
	res, err := svc.Step(rctx, req)
	if err != nil {
		t.Fatalf("the submit whose request ended after its append: %v; want the step it recorded", err)
	}
	again, err := svc.Step(ctx, req)
	if err != nil || again.Label != res.Label {
		t.Fatalf("the same submission again = %+v, %v; want %q replayed", again, err, res.Label)
	}
	l, err := st.Ledger(ctx, s.ID)
	if err != nil || len(l.Agents["me"]) != 1 {
		t.Fatalf("the host's entries = %d, %v; want the one", len(l.Agents["me"]), err)
	}
}
