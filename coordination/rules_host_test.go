package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// hostPair is a step-driven team of one scripted model (agent_a) and one
// host (me) where both have answered: agent_a twice, so its answers are
// agentN.1 and agentN.2.
func hostPair(t *testing.T) (*coordtest.Harness, *coordination.Session, []*coordtest.Scripted) {
	t.Helper()
	models, sc, provs := coordtest.Team(t, 1)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "agent_a", Model: models[0]}, {ID: "me", Model: "host"},
	}, Rules: coordination.Rules{MaxRounds: 8}})
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Answer("4, since 2+2=4")}
	submitHost(t, h, s, "new_answer", "2+2=4", "")
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	return h, s, sc
}

// submitHost takes a view for me and submits one action on it.
func submitHost(t *testing.T, h *coordtest.Harness, s *coordination.Session, action, content, target string) (*coordination.StepResult, coordination.StepRequest, error) {
	t.Helper()
	ctx := context.Background()
	view, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	req := coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: action, Content: content, Target: target, Reason: "checked", SeenSteps: view.SeenSteps}
	res, err := h.Service.Step(ctx, req)
	return res, req, err
}

// Item 1: a vote names the label the voter's view showed; any other label of
// that agent is refused with the fix, never counted for its newest answer.
func TestVoteForALabelTheViewDidNotShowIsRefused(t *testing.T) {
	h, s, _ := hostPair(t)
	a := coordtest.Alias(s, "agent_a")
	for _, label := range []string{a + ".1", a + ".9"} {
		_, _, err := submitHost(t, h, s, "vote", "", label)
		want := label + " is not the answer your view showed for " + a + ", which is " + a + ".2 — vote " + a + " or " + a + ".2"
		if !errors.Is(err, coordination.ErrBadAction) || !strings.Contains(err.Error(), want) {
			t.Fatalf("vote %s: %v, want %q", label, err, want)
		}
	}
	// The refusals did not use the view up, and the shown label is accepted.
	res, _, err := submitHost(t, h, s, "vote", "", a+".2")
	if err != nil || res.TargetLabel != a+".2" {
		t.Fatalf("vote for the shown label: %+v, %v", res, err)
	}
}

// Item 1, for models: the refusal is the corrective retry's message, and the
// vote recorded names exactly the shown label.
func TestModelVoteForAnOldLabelGetsACorrectiveRetry(t *testing.T) {
	h, s, sc := hostPair(t)
	ctx := context.Background()
	submitHost(t, h, s, "new_answer", "four, as 2+2 is 4", "")
	me := coordtest.Alias(s, "me")
	sc[0].Replies = []any{coordtest.Vote(me + ".1"), coordtest.Vote(me + ".2")}
	res, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != "vote" || res.TargetLabel != me+".2" {
		t.Fatalf("vote recorded %+v, want one for %s.2", res, me)
	}
	calls := sc[0].Requests()
	last := calls[len(calls)-1]
	if len(last.History) != 1 || !strings.Contains(last.History[0].Problem, me+".1 is not the answer your view showed for "+me) {
		t.Fatalf("the retry was not told what was wrong: %+v", last.History)
	}
}

// Item 5: an identical resubmission returns the original step's result and
// lands nothing; a different one on the same view is refused naming the step.
func TestHostResubmissionIsIdempotentAndAnotherIsRefused(t *testing.T) {
	h, s, _ := hostPair(t)
	ctx := context.Background()
	first, req, err := submitHost(t, h, s, "vote", "", coordtest.Alias(s, "agent_a"))
	if err != nil {
		t.Fatal(err)
	}
	before := len(h.Ledger(s.ID).Agents["me"])
	again, err := h.Service.Step(ctx, req)
	if err != nil {
		t.Fatalf("identical resubmission: %v", err)
	}
	if again.Action != first.Action || again.TargetLabel != first.TargetLabel || again.Label != first.Label {
		t.Fatalf("resubmission returned %+v, want the original %+v", again, first)
	}
	if n := len(h.Ledger(s.ID).Agents["me"]); n != before {
		t.Fatalf("the resubmission landed again: %d entries, want %d", n, before)
	}
	other := req
	other.Reason = "changed my mind"
	if _, err := h.Service.Step(ctx, other); !errors.Is(err, coordination.ErrStaleView) || !strings.Contains(err.Error(), "landed as step 2") {
		t.Fatalf("a different submission on a used view: %v", err)
	}
}

// Item 6: a host's vote on a view an answer has since superseded is refused
// (it can take a fresh view); it spends no step.
func TestHostVoteOnAnOutdatedViewIsRefused(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 1)
	h := coordtest.New(t, provs)
	ctx := context.Background()
	s := h.Create(coordination.TeamSpec{Driver: coordination.DriverStep, Agents: []coordination.Agent{
		{ID: "agent_a", Model: models[0]}, {ID: "me", Model: "host"},
	}, Rules: coordination.Rules{MaxRounds: 8}})
	sc[0].Replies = []any{coordtest.Answer("four"), coordtest.Answer("4, since 2+2=4")}
	submitHost(t, h, s, "new_answer", "2+2=4", "")
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	view, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err) // agent_a answers again: the host's view is outdated
	}
	before := len(h.Ledger(s.ID).Agents["me"])
	_, err = h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "vote", Target: coordtest.Alias(s, "agent_a"), SeenSteps: view.SeenSteps})
	var stale *coordination.StaleViewError
	if !errors.As(err, &stale) || stale.Why != coordination.ViewOutdated || !strings.Contains(err.Error(), "a newer answer landed") {
		t.Fatalf("vote on an outdated view: %v", err)
	}
	if n := len(h.Ledger(s.ID).Agents["me"]); n != before {
		t.Fatalf("the refused vote spent a step: %d entries, want %d", n, before)
	}
}

// Item 10: a host's view is a read: on a cancelled session it shows the view
// and says so, and the session stays cancelled until an action resumes it.
func TestHostViewDoesNotResumeACancelledSession(t *testing.T) {
	h, s, _ := hostPair(t)
	ctx := context.Background()
	if _, err := h.Service.Cancel(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	view, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if view.Action != "view" || !strings.Contains(view.Message, "cancelled") {
		t.Fatalf("view of a cancelled session: %+v", view)
	}
	st, err := h.Service.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Result.Status != coordination.StatusCancelled {
		t.Fatalf("after a view the session is %s, want cancelled", st.Result.Status)
	}
	if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "me", Action: "vote", Target: coordtest.Alias(s, "agent_a"), Reason: "ok", SeenSteps: view.SeenSteps}); err != nil {
		t.Fatalf("a submitted action resumes the session: %v", err)
	}
}

// Item 12: forced_first (no votes at all) stays MassGen's rule, and the
// result says plainly the winner was picked by arrival, not merit.
func TestForcedFirstSaysItWasPickedByArrival(t *testing.T) {
	models, sc, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{MaxRounds: 1}})
	sc[0].Replies = []any{coordtest.Answer("Answer: 1")}
	sc[1].Replies = []any{coordtest.Answer("Answer: 2")}
	res := h.Run(s.ID)
	if *res.HowChosen != coordination.ChosenForcedFirst || !strings.Contains(res.HowChosenNote, "by arrival, not merit") {
		t.Fatalf("forced_first result: how %s, note %q", *res.HowChosen, res.HowChosenNote)
	}
}

// Item 4: a step in flight when a forced end (here the budget) is decided
// lands after it; the result — returned and recorded — carries it and its
// cost.
func TestStepLandingAfterAForcedEndIsInTheResult(t *testing.T) {
	landedA, callingB := make(chan struct{}), make(chan struct{})
	costly := func(c float64) providers.Usage {
		return providers.Usage{Input: 10, Output: 5, CostUSD: &c}
	}
	provs := map[string]providers.Provider{}
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	provs[a.String()] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		<-callingB // both steps are in flight
		return coordtest.Answer("Answer: 1"), costly(0.5), nil
	})
	provs[b.String()] = providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		close(callingB)
		<-landedA // the model had replied before the end was decided
		return coordtest.Answer("Answer: 2"), costly(0.25), nil
	})
	h := coordtest.New(t, provs)
	budget := 0.5
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}},
		Rules: coordination.Rules{CostBudgetUSD: &budget}})
	sub, err := h.Service.Subscribe(context.Background(), coordination.Filter{Sessions: []string{s.ID}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	go func() {
		for range sub.Ready() {
			for _, o := range sub.Take() {
				if p := o.Progress; p.Kind == "answer" && p.Agent == "agent_a" {
					close(landedA)
				}
			}
		}
	}()
	r, _, err := h.Service.Start(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	if *res.StopReason != coordination.StopBudget || res.Steps != 2 || len(res.Answers) != 2 || res.CostUSD == nil || *res.CostUSD != 0.75 {
		t.Fatalf("returned result: %s", coordtest.JSON(res))
	}
	again, err := h.Service.Result(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps != 2 || *again.CostUSD != 0.75 || *again.Winner != *res.Winner {
		t.Fatalf("recorded result: %s", coordtest.JSON(again))
	}
}
