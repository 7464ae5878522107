package coordination_test

import (
	"context"
	"errors"
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
