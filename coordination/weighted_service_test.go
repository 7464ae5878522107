package coordination_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Through the service: a team of sims under consensus weighted, weights
// given for two of three, refuses weights for an agent it does not have and
// says in its result how each ballot counted and why it stopped.
func TestWeightedTeamSaysHowEachBallotCountedAndWhyItStopped(t *testing.T) {
	svc, _ := simService(1)
	seed := int64(5)
	rules := coordination.Rules{Consensus: coordination.RuleWeighted, AnswerFormat: coordination.FormatShort, EarlyStop: true, MaxRounds: 2, MaxAnswersPerAgent: 1,
		Weights: []coordination.VoteWeight{{Agent: "agent_a", Weight: 2.5, Reason: "counts 2.50: its first answer agreed with the team's weighted answer in 9 of 10 past items"}, {Agent: "agent_b", Weight: 0.5}}}
	spec := coordination.TeamSpec{Task: "What is 17 * 23?", Models: []string{"sim/accuracy=1:revise=0", "sim/accuracy=1:revise=0", "sim/accuracy=1:revise=0"}, Rules: rules, Seed: &seed}
	s, err := svc.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(context.Background(), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if coordination.Deref(res.HowChosen) != coordination.ChosenEarlyAgreement || res.Winner == nil || !strings.Contains(coordination.Deref(res.FinalAnswer), "391") {
		t.Fatalf("three right sims agree after round 0 (lead 4 ≥ log 19): %+v", res)
	}
	if !strings.Contains(res.HowChosenNote, "stopped after round 0: 391 leads by 4.00") {
		t.Fatalf("why it stopped: %q", res.HowChosenNote)
	}
	w := res.Consensus.Weights
	if len(w) != 3 || w[0].Weight != 2.5 || !strings.Contains(w[0].Reason, "9 of 10 past items") || w[2].Weight != 1 || !strings.Contains(w[2].Reason, "no weight was given") {
		t.Fatalf("every agent's weight and why: %+v", w)
	}
	if res.Consensus.WeightedTally[res.Winner.Label] != 4 {
		t.Fatalf("weighted tally: %v", res.Consensus.WeightedTally)
	}
	spec.Rules.Weights = []coordination.VoteWeight{{Agent: "agent_z", Weight: 1}}
	if _, err := svc.Create(context.Background(), spec); !errors.Is(err, coordination.ErrBadSettings) || !strings.Contains(err.Error(), "agent_z, which is not an agent of this team") {
		t.Fatalf("a weight for no agent of the team: %v", err)
	}
}

// With no weights given, consensus weighted reads the user's own past
// short-answer sessions of the same models: an agent that always disagreed
// with the two that agreed weighs less, and the reason says so.
func TestWeightedTeamWeighsAgentsByTheirPastSessions(t *testing.T) {
	svc, _ := simService(1)
	models := []string{"sim:accuracy=1:revise=0:seed=1", "sim:accuracy=1:revise=0:seed=2", "sim:accuracy=0:revise=0:seed=3"}
	for i := range 12 {
		seed := int64(100 + i)
		_, res := runSim(t, svc, coordination.TeamSpec{Task: fmt.Sprintf("What is %d * 7?", 11+i), Models: models, Seed: &seed,
			Rules: coordination.Rules{AnswerFormat: coordination.FormatShort, MaxRounds: 1}})
		if res.Status != coordination.StatusFinished {
			t.Fatalf("past session %d: %s", i, res.Status)
		}
	}
	seed := int64(7)
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "What is 17 * 23?", Models: models, Seed: &seed,
		Rules: coordination.Rules{Consensus: coordination.RuleWeighted, AnswerFormat: coordination.FormatShort, MaxRounds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Rules.Weights
	if len(w) != 3 || !(w[0].Weight > w[2].Weight && w[1].Weight > w[2].Weight) {
		t.Fatalf("the always-wrong agent must weigh least: %+v", w)
	}
	if !strings.Contains(w[0].Reason, "of 12 past short-answer sessions") {
		t.Fatalf("the reason names the past sessions: %q", w[0].Reason)
	}
}
