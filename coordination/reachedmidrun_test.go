package coordination_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
)

// TestConsensusIsReachedOnlyWhenTheRunEndsOnIt: consensus.reached says the
// run ended on agreement, not that the standing votes of the moment meet
// the rule. Under majority, agent_a and agent_b vote for agent_b's answer
// while agent_c has yet to step: 2 of 3 meets the rule, but agent_c's new
// answer then makes both votes stale and the count starts over. Every view
// of that moment (the step's result, team_status, the status view) used to
// say reached: true.
func TestConsensusIsReachedOnlyWhenTheRunEndsOnIt(t *testing.T) {
	ctx := context.Background()
	models, sc, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	b := coordtest.Alias(s, "agent_b")
	sc[0].Replies = []any{coordtest.Answer("4"), coordtest.Vote(b), coordtest.Vote(b)}
	sc[1].Replies = []any{coordtest.Answer("four"), coordtest.Vote(b), coordtest.Vote(b)}
	sc[2].Replies = []any{coordtest.Answer("IV"), coordtest.Answer("4, as IV is four"), coordtest.Vote(b)}
	step := func(agent string) *coordination.StepResult {
		t.Helper()
		r, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
		if err != nil {
			t.Fatalf("step of %s: %v", agent, err)
		}
		return r
	}
	status := func() *coordination.TeamResult {
		t.Helper()
		v, err := h.Service.Status(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return v.Result
	}
	for _, a := range []string{"agent_a", "agent_b", "agent_c"} {
		step(a)
	}
	step("agent_a")
	r := step("agent_b")
	if r.Finished {
		t.Fatalf("the session ended with agent_c still to step: %s", coordtest.JSON(r))
	}
	if r.Consensus.Reached || !r.Consensus.RuleMet {
		t.Errorf("agent_b's step, agent_c yet to step: consensus %s; want the rule met by the votes so far, not reached", coordtest.JSON(r.Consensus))
	}
	if res := status(); res.Status != coordination.StatusRunning || res.Consensus.Reached || !res.Consensus.RuleMet {
		t.Errorf("the running session's status (%s): consensus %s; want the rule met by the votes so far, not reached", res.Status, coordtest.JSON(res.Consensus))
	}

	step("agent_c") // a new answer: agent_a's and agent_b's votes are stale
	if res := status(); res.Consensus.Reached || res.Consensus.RuleMet {
		t.Errorf("every vote stale: consensus %s; want neither reached nor the rule met", coordtest.JSON(res.Consensus))
	}

	step("agent_a")
	step("agent_b")
	r = step("agent_c")
	if !r.Finished || r.Result == nil || coordination.Deref(r.Result.HowChosen) != coordination.ChosenConsensus {
		t.Fatalf("the last vote should end the session on consensus: %s", coordtest.JSON(r))
	}
	if !r.Result.Consensus.Reached || !r.Consensus.Reached {
		t.Errorf("the session ended on consensus but its result says not reached: %s", coordtest.JSON(r.Result.Consensus))
	}
	if res := status(); !res.Consensus.Reached {
		t.Errorf("the finished session's status says consensus not reached: %s", coordtest.JSON(res.Consensus))
	}
}

// TestWeightedConsensusIsNotReachedByAFirstAnswer: under consensus
// weighted an answer is a ballot, so the rule is met by the first answer
// to land; the status said reached before anyone had voted, or the other
// agents had even answered.
func TestWeightedConsensusIsNotReachedByAFirstAnswer(t *testing.T) {
	ctx := context.Background()
	models, sc, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Rules: coordination.Rules{Consensus: coordination.RuleWeighted, AnswerFormat: coordination.FormatShort}})
	sc[0].Replies = []any{coordtest.Answer("Answer: 4")}
	r, err := h.Service.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Finished || r.Consensus.Reached || !r.Consensus.RuleMet {
		t.Errorf("one answer in, the step says finished %v, consensus %s; want running, the rule met by the ballots so far, not reached", r.Finished, coordtest.JSON(r.Consensus))
	}
	v, err := h.Service.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Result.Consensus.Reached {
		t.Errorf("one answer in, the status says consensus reached: %s", coordtest.JSON(v.Result.Consensus))
	}
}
