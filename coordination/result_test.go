package coordination

import (
	"encoding/json"
	"testing"
)

func TestResultCloneIsDeep(t *testing.T) {
	stop, how, final, cost, leader := StopConsensus, "consensus", "42", 0.5, "agent1.1"
	r := &TeamResult{
		SessionID: "s", StopReason: &stop, HowChosen: &how, FinalAnswer: &final, CostUSD: &cost,
		Winner:     &Winner{AgentID: "a", Label: "agent1.1"},
		Consensus:  ConsensusView{Rule: "majority", Leader: &leader, Tally: map[string]int{"agent1.1": 2}},
		Votes:      []VoteView{{Voter: "a", Target: "a"}},
		Answers:    []AnswerView{{AgentID: "a", Content: "42"}},
		NextAgents: []string{},
		Agents:     []AgentUsage{{AgentID: "a", CostUSD: &cost}},
	}
	before, _ := json.Marshal(r)
	c := r.Clone()
	*c.StopReason, *c.HowChosen, *c.FinalAnswer, *c.CostUSD, *c.Consensus.Leader = "x", "x", "x", 9, "x"
	c.Winner.AgentID, c.Consensus.Tally["agent1.1"] = "x", 9
	c.Votes[0].Voter, c.Answers[0].Content, *c.Agents[0].CostUSD = "x", "x", 9
	if after, _ := json.Marshal(r); string(after) != string(before) {
		t.Fatalf("changing the clone changed the original:\n%s\n%s", before, after)
	}
	if c.NextAgents == nil {
		t.Fatal("an empty slice stays empty, not null")
	}
}
