package coordination_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// TestAStoredResultOfTheOldShapeIsNotReachedWithoutAgreement: a result
// recorded before consensus.reached meant "agreement chose the winner"
// kept reached as the tally of the moment made it: a strict run that
// failed with no winner could be stored with reached: true. Read back,
// the session's result and status said consensus was reached on a run
// that ended on nothing. A result agreement did choose keeps it.
func TestAStoredResultOfTheOldShapeIsNotReachedWithoutAgreement(t *testing.T) {
	ctx := context.Background()
	chosen := coordination.ChosenConsensus
	for _, c := range []struct {
		name  string
		old   coordination.TeamResult
		agree bool
	}{
		{"a strict run that failed with no winner", coordination.TeamResult{Status: coordination.StatusFailed, StopReason: new(coordination.StopAgentsFailed)}, false},
		{"a finished run its timeout chose", coordination.TeamResult{Status: coordination.StatusFinished, StopReason: new(coordination.StopTimeout), HowChosen: new(coordination.ChosenForcedFirst), Winner: &coordination.Winner{AgentID: "agent_a", Label: "agent1.1"}}, false},
		{"a finished run agreement chose", coordination.TeamResult{Status: coordination.StatusFinished, StopReason: new(coordination.StopConsensus), HowChosen: &chosen, Winner: &coordination.Winner{AgentID: "agent_a", Label: "agent1.1"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			models, _, provs := coordtest.Team(t, 2)
			h := coordtest.New(t, provs)
			s := h.Create(coordination.TeamSpec{Models: models})
			old := c.old
			old.SessionID = s.ID
			leader := "agent2.1" // the tally's leader when it was stored
			if c.agree {
				leader = old.Winner.Label
			}
			old.Consensus = coordination.ConsensusView{Rule: coordination.RuleMajority, Reached: true, Leader: &leader, Tally: map[string]int{"agent2.1": 2}}
			if _, err := h.Store.AppendSession(ctx, s.ID, coordination.SessionEntry{Kind: coordination.SessionFinished, Result: &old}); err != nil {
				t.Fatal(err)
			}
			res, err := h.Service.Result(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			v, err := h.Service.Status(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			for what, r := range map[string]*coordination.TeamResult{"result": res, "status": v.Result} {
				if r.Status != old.Status {
					t.Fatalf("the %s reads status %s; stored %s", what, r.Status, old.Status)
				}
				if r.Consensus.Reached != c.agree {
					t.Errorf("the %s of %s reads consensus %s; want reached %v", what, c.name, coordtest.JSON(r.Consensus), c.agree)
				}
				if c.agree && (r.Consensus.Leader == nil || *r.Consensus.Leader != old.Winner.Label) {
					t.Errorf("the %s of %s reads consensus %s; want the winner %s as its leader", what, c.name, coordtest.JSON(r.Consensus), old.Winner.Label)
				}
			}
		})
	}
}
