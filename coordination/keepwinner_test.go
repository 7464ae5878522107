package coordination_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAWinnersAnswerSupersededAfterTheEndStaysInTheResult: the winner's
// agent had its next step in flight when the team was finalized, and that
// step's answer landed after the end. The amended result lists every
// agent's latest answer and still the winner's, which the decision chose:
// without it, the result's winner was not among its answers (found by
// TestSimTeamsAlwaysFinish, under early agreement with parallel steps).
func TestAWinnersAnswerSupersededAfterTheEndStaysInTheResult(t *testing.T) {
	release, calling := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	a, _ := providers.ParseSpec("sim:seed=1")
	b, _ := providers.ParseSpec("sim:seed=2")
	provs := map[string]providers.Provider{
		a.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			if calls.Add(1) == 1 {
				return coordtest.Answer("Answer: 1"), providers.Usage{Input: 10, Output: 5}, nil
			}
			close(calling)
			<-release // the model replies after the end was decided
			return coordtest.Answer("Answer: 3"), providers.Usage{Input: 10, Output: 5}, nil
		}),
		b.String(): providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
			return coordtest.Answer("Answer: 2"), providers.Usage{Input: 10, Output: 5}, nil
		}),
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Agents: []coordination.Agent{{ID: "agent_a", Model: a.String()}, {ID: "agent_b", Model: b.String()}}})
	ctx := context.Background()
	for _, id := range []string{"agent_a", "agent_b"} {
		if _, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: id}); err != nil {
			t.Fatal(err)
		}
		// A finalize without votes takes the first answer to arrive, by
		// its time (to the millisecond): agent_a's, clearly first.
		time.Sleep(5 * time.Millisecond)
	}
	late := make(chan error, 1)
	go func() {
		_, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
		late <- err
	}()
	<-calling
	res, err := h.Service.Finalize(ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner == nil || res.Winner.AgentID != "agent_a" {
		t.Fatalf("finalized with winner %+v; the test needs agent_a's first answer to win: %s", res.Winner, coordtest.JSON(res))
	}
	won := *res.Winner
	close(release)
	if err := <-late; err != nil {
		t.Logf("the late step: %v", err)
	}
	again, err := h.Service.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps != 3 {
		t.Fatalf("the late answer did not land after the end (%d steps); the test tests nothing: %s", again.Steps, coordtest.JSON(again))
	}
	var labels []string
	found := false
	for _, ans := range again.Answers {
		labels = append(labels, ans.Label)
		found = found || (ans.AgentID == won.AgentID && ans.Label == won.Label)
	}
	if *again.Winner != won || !found {
		t.Fatalf("amended result: winner %+v, answers %v; want the winner %+v unchanged and among the answers", again.Winner, labels, won)
	}
	// The newer first, as readers take an agent's first listed answer for
	// its latest.
	if len(again.Answers) != 3 || again.Answers[0].AgentID != "agent_a" || again.Answers[0].Label == won.Label || again.Answers[1].Label != won.Label {
		t.Errorf("amended answers %v: want agent_a's newer answer, then the winner's, then agent_b's", labels)
	}
}

// TestAnsweredCountsAgentsNotAnswers: a result listing the winner's
// answer beside its agent's newer one counts that agent once.
func TestAnsweredCountsAgentsNotAnswers(t *testing.T) {
	r := &coordination.TeamResult{Answers: []coordination.AnswerView{
		{AgentID: "agent_a", Label: "agent1.2"}, {AgentID: "agent_a", Label: "agent1.1"}, {AgentID: "agent_b", Label: "agent2.1"},
	}}
	if n := r.Answered(); n != 2 {
		t.Errorf("Answered() = %d, want 2", n)
	}
}
