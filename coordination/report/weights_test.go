package report_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// Under consensus weighted the printed result says how much each agent's
// ballots counted and why, and why round 0 stopped the run; under the other
// rules it says nothing of weights.
func TestAWeightedResultSaysEachWeightAndWhyItStopped(t *testing.T) {
	how := coordination.ChosenEarlyAgreement
	stop := coordination.StopEarlyAgreement
	r := &coordination.TeamResult{SessionID: "team_w", Status: coordination.StatusFinished, HowChosen: &how, StopReason: &stop,
		Winner:  &coordination.Winner{AgentID: "agent_a", Label: "agent2.1", Model: "openai/gpt-5.4"},
		Answers: []coordination.AnswerView{{AgentID: "agent_a", Label: "agent2.1", Model: "openai/gpt-5.4"}, {AgentID: "agent_b", Label: "agent1.1", Model: "claude/claude-opus-4-6"}},
		Consensus: coordination.ConsensusView{Rule: coordination.RuleWeighted, Reached: true, Weights: []coordination.VoteWeight{
			{Agent: "agent_a", Weight: 3.44, Reason: "counts 3.44: its first answer agreed with the team's weighted answer in 37 of 41 past short-answer sessions (estimated right 91 % of the time)"},
			{Agent: "agent_b", Weight: 1.4, Reason: "the operator's team file"},
			{Agent: "agent_c", Weight: 1},
		}},
		HowChosenNote: "stopped after round 0: 391 leads by 4.84, past the 2.94 that odds of 19 to 1 need, and 2 agents hold it (agent_a 3.44, agent_b 1.40); nobody voted",
	}
	out := report.Result(r)
	for _, want := range []string{
		"Weights (consensus weighted: each agent's answer and vote count its weight):\n",
		"  agent_a (gpt-5.4)'s vote counts 3.44: its first answer agreed with the team's weighted answer in 37 of 41 past short-answer sessions (estimated right 91 % of the time)\n",
		"  agent_b (claude-opus-4-6)'s vote counts 1.40: the operator's team file\n",
		"  agent_c's vote counts 1.00\n",
		"How: stopped after round 0: 391 leads by 4.84, past the 2.94 that odds of 19 to 1 need",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the result lacks %q:\n%s", want, out)
		}
	}
	r.Consensus = coordination.ConsensusView{Rule: coordination.RuleMajority, Reached: true}
	r.HowChosenNote = ""
	if out := report.Result(r); strings.Contains(out, "Weights") || strings.Contains(out, "How:") {
		t.Errorf("a majority result speaks of weights:\n%s", out)
	}
}

// The status text's rules line names the round-0 stops a session runs with.
func TestTheStatusRulesLineNamesTheRound0Stops(t *testing.T) {
	v := splitView()
	v.Rules = coordination.Rules{Consensus: coordination.RuleWeighted, MaxRounds: 2, MaxAnswersPerAgent: 1, Final: coordination.FinalWinner,
		AnswerFormat: coordination.FormatShort, EarlyStop: true, DominantStop: true}
	want := "Rules: consensus weighted, max_rounds 2, max_answers_per_agent 1, final winner, answer_format short, early_stop, dominant_stop\n"
	if md := report.Markdown(v); !strings.Contains(md, want) {
		t.Errorf("the rules line lacks %q:\n%s", want, md)
	}
}
