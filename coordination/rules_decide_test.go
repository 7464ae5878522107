package coordination

import "testing"

// Item 3: with one agent left, its own standing vote decides — for another
// agent's answer if that is what it voted for — and single_agent applies
// only to a survivor without one.
func TestSurvivorsStandingVoteDecidesBeforeSingleAgent(t *testing.T) {
	b := newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b", "c")
	b.answer("a", "Answer: 1")
	b.answer("b", "Answer: 2")
	b.answer("c", "Answer: 3")
	b.vote("a", "b")
	b.fail("b")
	b.fail("c")
	d := b.decide()
	if d.Kind != DecideFinish || d.Winner != "b" || d.How != ChosenConsensus || d.Stop != StopConsensus {
		t.Fatalf("the survivor voted for b: %+v", d)
	}

	b = newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b")
	b.answer("a", "Answer: 1")
	b.answer("b", "Answer: 2")
	b.fail("b")
	if d := b.decide(); d.Winner != "a" || d.How != ChosenSingleAgent {
		t.Fatalf("a survivor without a standing vote wins alone: %+v", d)
	}
}

// Item 2: with blind_first false an agent may vote before it answers; that
// releases the round-0 barrier instead of holding it for good, so the
// agents that answered get their turn to vote.
func TestEarlyVoteReleasesTheRound0Barrier(t *testing.T) {
	no := false
	b := newTeam(t, Rules{BlindFirst: &no}, "a", "b", "c")
	b.answer("a", "Answer: 1")
	b.answer("b", "Answer: 2")
	b.vote("c", "a")
	st := b.state()
	if st.Round0 {
		t.Fatal("every agent has answered or chosen to vote: round 0 is over")
	}
	if len(st.Next) != 2 || st.Next[0] != "a" || st.Next[1] != "b" {
		t.Fatalf("a and b must get their turn to vote: next %v", st.Next)
	}
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("one early vote must not end the run: %+v", d)
	}
	// While an agent has neither answered nor voted, the barrier holds.
	b = newTeam(t, Rules{BlindFirst: &no}, "a", "b", "c")
	b.answer("a", "Answer: 1")
	b.vote("c", "a")
	if st := b.state(); !st.Round0 || len(st.Next) != 1 || st.Next[0] != "b" {
		t.Fatalf("b has not acted: round0 %v, next %v", st.Round0, st.Next)
	}
}

// Item 11: an agent capped without ever voting cannot vote, so it is not
// in the denominator: the others can still be unanimous.
func TestCappedAgentWithoutAVoteIsNotInTheDenominator(t *testing.T) {
	b := newTeam(t, Rules{Consensus: RuleUnanimous, MaxRounds: 2}, "a", "b", "c")
	b.answer("a", "Answer: 1")
	b.answer("b", "Answer: 2")
	b.answer("c", "Answer: 3")
	b.answer("c", "Answer: 4") // c is capped, with no vote
	b.vote("a", "b")
	b.vote("b", "b")
	st := b.state()
	if tl := CountStanding(b.s, st); tl.Live != 2 {
		t.Fatalf("denominator %d, want the 2 agents that can vote", tl.Live)
	}
	if d := b.decide(); d.Kind != DecideFinish || d.Winner != "b" || d.How != ChosenConsensus {
		t.Fatalf("a and b agree, c cannot vote: %+v", d)
	}
}
