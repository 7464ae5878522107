package coordination

import (
	"slices"
	"testing"
)

func TestDecideConsensusWhenSettled(t *testing.T) {
	b := threeWay(t, Rules{})
	b.vote("a", "b")
	b.vote("b", "b")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("c has not voted yet: %+v", d)
	}
	b.vote("c", "a")
	d := b.decide()
	if d.Kind != DecideFinish || d.Winner != "b" || d.How != ChosenConsensus || d.Stop != StopConsensus {
		t.Fatalf("got %+v", d)
	}
	if d := b.decide("c"); d.Kind != DecideNothing {
		t.Fatal("never decide while a step is in flight")
	}
}

func TestSplitVoteGetsOneRevoteThenForcedStanding(t *testing.T) {
	b := threeWay(t, Rules{})
	b.vote("a", "a")
	b.vote("b", "b")
	b.vote("c", "c")
	d := b.decide()
	if d.Kind != DecideRevote || !slices.Equal(d.Revote, []string{"a", "b", "c"}) {
		t.Fatalf("a split asks for a re-vote: %+v", d)
	}
	b.session(SessionRevote, d.Revote...)
	b.revote("a", "a")
	b.revote("b", "b")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("c still has to re-vote: %+v", d)
	}
	b.revote("c", "b")
	d = b.decide()
	if d.Kind != DecideFinish || d.Winner != "b" || d.How != ChosenConsensus {
		t.Fatalf("after the re-vote b has 2 of 3: %+v", d)
	}
}

func TestForcedStandingWithSeededTieDraw(t *testing.T) {
	b := threeWay(t, Rules{})
	b.vote("a", "a")
	b.vote("b", "b")
	b.vote("c", "c")
	b.session(SessionRevote, "a", "b", "c")
	b.revote("a", "a")
	b.revote("b", "b")
	b.revote("c", "c")
	d := b.decide()
	if d.Kind != DecideFinish || d.How != ChosenForcedStanding || !d.Tie || d.Stop != StopSplitVote {
		t.Fatalf("got %+v", d)
	}
	again := b.decide()
	if again.Winner != d.Winner {
		t.Fatal("the tie draw is seeded: the same ledger draws the same winner")
	}
	winners := map[string]bool{}
	for seed := int64(0); seed < 40; seed++ {
		b.s.Seed = seed
		winners[b.decide().Winner] = true
	}
	if len(winners) < 2 {
		t.Fatalf("different seeds should draw different winners; got %v", winners)
	}
}

func TestForcedStandingUniqueLeaderIsNoTie(t *testing.T) {
	b := newTeam(t, Rules{Consensus: RuleUnanimous}, "a", "b", "c")
	b.answer("a", "1")
	b.answer("b", "2")
	b.answer("c", "3")
	b.vote("a", "b")
	b.vote("b", "b")
	b.vote("c", "c")
	b.session(SessionRevote, "a", "b", "c")
	b.revote("a", "b")
	b.revote("b", "b")
	b.revote("c", "c")
	d := b.decide()
	if d.Winner != "b" || d.How != ChosenForcedStanding || d.Tie {
		t.Fatalf("got %+v", d)
	}
}

func TestForcedCurrentWhenNoVoteStands(t *testing.T) {
	// max_rounds 3: a and b answer, vote, then c answers again late so
	// nobody's vote stands; a's vote for b still names b's current label.
	b := newTeam(t, Rules{MaxRounds: 3, MaxAnswersPerAgent: 3}, "a", "b", "c")
	b.answer("a", "1")
	b.answer("b", "2")
	b.answer("c", "3")
	b.vote("a", "b")
	b.vote("b", "b")
	b.answer("c", "3 again")
	b.answer("a", "1 again")
	b.answer("b", "2 again") // a's vote for b now names an old label
	b.vote("c", "c")         // c capped with a vote that saw everything
	b.l.Agents["c"][2].SeenSteps = map[string]int{"a": 1, "b": 1, "c": 2}
	st := b.state()
	for _, a := range st.Agents {
		if a.StandingVote != nil {
			t.Fatalf("%s should have no standing vote", a.ID)
		}
		if !a.Capped {
			t.Fatalf("%s should be capped", a.ID)
		}
	}
	d := b.decide()
	if d.How != ChosenForcedCurrent || d.Winner != "c" || d.Stop != StopMaxRounds {
		t.Fatalf("c's vote for c.2 is current (c's label is still agent3.2): %+v", d)
	}
}

func TestForcedFirstWhenNoVotes(t *testing.T) {
	b := newTeam(t, Rules{MaxRounds: 1}, "a", "b", "c")
	b.answer("b", "first")
	b.answer("a", "second")
	b.answer("c", "third")
	d := b.decide()
	if d.Kind != DecideFinish || d.How != ChosenForcedFirst || d.Winner != "b" || d.Stop != StopMaxRounds {
		t.Fatalf("got %+v", d)
	}
}

func TestSingleAgentLeftWinsOnceItHasAnAnswer(t *testing.T) {
	b := newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b")
	b.fail("b")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("a has no answer yet: %+v", d)
	}
	b.answer("a", "42")
	d := b.decide()
	if d.Winner != "a" || d.How != ChosenSingleAgent || d.Stop != StopSingleAgent {
		t.Fatalf("got %+v", d)
	}
}

func TestAllDroppedFallsBackToFirstAnswerOrFails(t *testing.T) {
	b := newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b")
	b.fail("a")
	b.fail("b")
	d := b.decide()
	if d.Kind != DecideFinish || d.Winner != "" || d.Stop != StopAgentsFailed {
		t.Fatalf("no answer at all fails: %+v", d)
	}
	c := newTeam(t, Rules{MaxAgentFailures: 1}, "a", "b")
	c.answer("b", "only")
	c.answer("a", "later")
	c.fail("a")
	c.fail("b")
	d = c.decide()
	if d.Winner != "b" || d.How != ChosenForcedFirst || d.Stop != StopAgentsFailed {
		t.Fatalf("got %+v", d)
	}
}

func TestAllVoteForSelfSplitsThenForced(t *testing.T) {
	b := newTeam(t, Rules{}, "a", "b")
	b.answer("a", "1")
	b.answer("b", "2")
	b.vote("a", "a")
	b.vote("b", "b")
	if d := b.decide(); d.Kind != DecideRevote {
		t.Fatalf("got %+v", d)
	}
	b.session(SessionRevote, "a", "b")
	b.revote("a", "a")
	b.revote("b", "b")
	d := b.decide()
	if d.How != ChosenForcedStanding || !d.Tie || d.Stop != StopSplitVote {
		t.Fatalf("got %+v", d)
	}
}

func TestCappedVoterIsNotAskedToRevote(t *testing.T) {
	b := newTeam(t, Rules{MaxRounds: 2}, "a", "b", "c")
	b.answer("a", "1")
	b.answer("b", "2")
	b.answer("c", "3")
	b.vote("a", "a")
	b.vote("b", "b")
	b.vote("c", "c")
	b.l.Agents["c"] = append(b.l.Agents["c"][:0:0], b.l.Agents["c"]...)
	b.s.Rules.MaxRounds = 2
	d := b.decide()
	if d.Kind != DecideFinish || d.Stop != StopSplitVote {
		t.Fatalf("everyone is capped: no re-vote possible, forced: %+v", d)
	}
}

func TestEarlyAgreementAfterRoundZero(t *testing.T) {
	rules := Rules{AnswerFormat: FormatShort, EarlyStop: true}
	b := newTeam(t, rules, "a", "b", "c")
	b.answer("a", "Answer: 391")
	b.answer("b", "Answer: 381")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("round 0 is not complete: %+v", d)
	}
	b.answer("c", "so 391.")
	d := b.decide()
	if d.Winner != "a" || d.How != ChosenEarlyAgreement || d.Stop != StopEarlyAgreement {
		t.Fatalf("got %+v", d)
	}
	// No strict majority: no early stop.
	n := newTeam(t, rules, "a", "b", "c", "d")
	n.answer("a", "Answer: 1")
	n.answer("b", "Answer: 1")
	n.answer("c", "Answer: 2")
	n.answer("d", "Answer: 3")
	if d := n.decide(); d.Kind != DecideNothing {
		t.Fatalf("2 of 4 is not a strict majority: %+v", d)
	}
}

func TestForceEndsWithStopReason(t *testing.T) {
	b := threeWay(t, Rules{})
	b.vote("a", "c")
	d := Decide(b.s, b.state("b"), StopTimeout)
	if d.Kind != DecideFinish || d.Stop != StopTimeout || d.How != ChosenForcedStanding || d.Winner != "c" {
		t.Fatalf("got %+v", d)
	}
	e := newTeam(t, Rules{}, "a", "b")
	if d := Decide(e.s, e.state(), StopBudget); d.Winner != "" || d.Stop != StopBudget {
		t.Fatalf("no answers: failed with the forcing reason: %+v", d)
	}
}

// An answer that holds no value (punctuation, a shrug of symbols) agrees
// with nothing: two such answers are not a majority that stops the run
// after round 0, as unanimity's rule already holds (Unanimous).
func TestEarlyAgreementNeedsAValue(t *testing.T) {
	rules := Rules{AnswerFormat: FormatShort, EarlyStop: true}
	b := newTeam(t, rules, "a", "b", "c")
	b.answer("a", "...")
	b.answer("b", "**")
	b.answer("c", "Answer: 7")
	if d := b.decide(); d.How == ChosenEarlyAgreement || d.Stop == StopEarlyAgreement {
		t.Fatalf("two answers with no value stopped the run early: %+v", d)
	}
}
