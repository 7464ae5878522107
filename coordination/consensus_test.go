package coordination

import (
	"testing"
)

// threeWay answers for a, b, c and returns the team.
func threeWay(t *testing.T, rules Rules) *team {
	b := newTeam(t, rules, "a", "b", "c")
	b.answer("a", "Answer: 1")
	b.answer("b", "Answer: 2")
	b.answer("c", "Answer: 3")
	return b
}

func TestConsensusRules(t *testing.T) {
	cases := []struct {
		name   string
		rule   ConsensusRule
		votes  [][2]string
		winner string
		met    bool
	}{
		{"majority met", RuleMajority, [][2]string{{"a", "b"}, {"b", "b"}, {"c", "a"}}, "b", true},
		{"majority not met by plurality of 3 way split", RuleMajority, [][2]string{{"a", "a"}, {"b", "b"}, {"c", "c"}}, "", false},
		{"plurality met", RulePlurality, [][2]string{{"a", "b"}, {"b", "b"}, {"c", "a"}}, "b", true},
		{"plurality tie never meets", RulePlurality, [][2]string{{"a", "a"}, {"b", "b"}, {"c", "c"}}, "", false},
		{"unanimous met", RuleUnanimous, [][2]string{{"a", "c"}, {"b", "c"}, {"c", "c"}}, "c", true},
		{"unanimous not met", RuleUnanimous, [][2]string{{"a", "c"}, {"b", "c"}, {"c", "a"}}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := threeWay(t, Rules{Consensus: c.rule})
			for _, v := range c.votes {
				b.vote(v[0], v[1])
			}
			st := b.state()
			w, ok := RuleMet(c.rule, CountStanding(b.s, st))
			if ok != c.met || w != c.winner {
				t.Fatalf("RuleMet = %q, %v; want %q, %v", w, ok, c.winner, c.met)
			}
		})
	}
}

func TestMajorityTieBetweenTwoNeverMeets(t *testing.T) {
	b := newTeam(t, Rules{Consensus: RulePlurality}, "a", "b")
	b.answer("a", "1")
	b.answer("b", "2")
	b.vote("a", "a")
	b.vote("b", "b")
	if _, ok := RuleMet(RulePlurality, CountStanding(b.s, b.state())); ok {
		t.Fatal("1-1 is a tie")
	}
}

func TestDroppedAgentsLeaveTheDenominatorButTheirAnswersCanWin(t *testing.T) {
	b := newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b", "c")
	b.answer("a", "1")
	b.answer("b", "2")
	b.answer("c", "3")
	b.fail("c")
	b.vote("a", "c")
	b.vote("b", "a")
	st := b.state()
	tl := CountStanding(b.s, st)
	if tl.Live != 2 {
		t.Fatalf("live = %d, want 2", tl.Live)
	}
	if _, ok := RuleMet(RuleMajority, tl); ok {
		t.Fatal("1 of 2 is not a majority")
	}
	b.vote("b", "c")
	w, ok := RuleMet(RuleMajority, CountStanding(b.s, b.state()))
	if !ok || w != "c" {
		t.Fatalf("a dropped agent's answer can win: got %q %v", w, ok)
	}
}

func TestShortAnswersPoolVotesByFinalValue(t *testing.T) {
	b := newTeam(t, Rules{AnswerFormat: FormatShort}, "a", "b", "c", "d")
	b.answer("a", "17*23 = 391\nAnswer: 391")
	b.answer("b", "I get 391.")
	b.answer("c", "Answer: 381")
	b.answer("d", "Answer: 390")
	b.vote("a", "a")
	b.vote("b", "b")
	b.vote("c", "c")
	b.vote("d", "b")
	w, ok := RuleMet(RuleMajority, CountStanding(b.s, b.state()))
	if !ok {
		t.Fatal("pooled 391 has 3 of 4 votes")
	}
	if w != "b" {
		t.Fatalf("within the pool the most-voted agent wins; got %q", w)
	}
	// Free answers do not pool.
	b.s.Rules.AnswerFormat = FormatFree
	if _, ok := RuleMet(RuleMajority, CountStanding(b.s, b.state())); ok {
		t.Fatal("without short answers, 2 of 4 is no majority")
	}
}

func TestPoolWinnerTieGoesToLowestAnonymousNumber(t *testing.T) {
	b := newTeam(t, Rules{AnswerFormat: FormatShort}, "a", "b", "c")
	b.answer("a", "Answer: 7")
	b.answer("b", "Answer: 7.0")
	b.answer("c", "Answer: 8")
	b.vote("a", "b")
	b.vote("b", "a")
	b.vote("c", "c")
	w, ok := RuleMet(RuleMajority, CountStanding(b.s, b.state()))
	if !ok || w != "a" {
		t.Fatalf("got %q %v, want a (agent1)", w, ok)
	}
}
