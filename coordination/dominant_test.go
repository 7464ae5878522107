package coordination

import (
	"strings"
	"testing"
)

// dominant_stop: round 0 is final when one agent's weight is more than all
// the others' together (it wins, whatever they answered), and only then;
// without the rule the vote round runs; an SPRT stop, when both apply, is
// read first.
func TestDominantStopEndsRound0OnlyWhenOneAgentOutweighsTheRest(t *testing.T) {
	heavy := weighted(VoteWeight{Agent: "a", Weight: 4}, VoteWeight{Agent: "b", Weight: 0.7}, VoteWeight{Agent: "c", Weight: 0.6}, VoteWeight{Agent: "d", Weight: 0.5})
	heavy.MaxRounds, heavy.MaxAnswersPerAgent, heavy.DominantStop = 2, 1, true
	b := newTeam(t, heavy, "a", "b", "c", "d")
	b.answer("a", "Answer: 18")
	b.answer("b", "Answer: 20")
	b.answer("c", "Answer: 20")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("round 0 is not over while d has not answered: %+v", d)
	}
	b.answer("d", "Answer: 20")
	d := b.decide()
	if d.Kind != DecideFinish || d.Winner != "a" || d.How != ChosenConsensus || d.Stop != StopConsensus {
		t.Fatalf("a's 4 is more than 1.8 together: the weighted vote of round 0 is final: %+v", d)
	}
	note := weightedNote(b.s, b.state(), ChosenConsensus, "a", StopConsensus)
	if !strings.Contains(note, "round 0 ended the run (dominant_stop): a's weight 4.00 is more than the other agents' 1.80 together") {
		t.Fatalf("the note says why round 0 ended it: %q", note)
	}

	// Without dominant_stop the same answers go to the vote round.
	heavy.DominantStop = false
	b = newTeam(t, heavy, "a", "b", "c", "d")
	for id, v := range map[string]string{"a": "18", "b": "20", "c": "20", "d": "20"} {
		b.answer(id, "Answer: "+v)
	}
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("without dominant_stop the vote round runs: %+v", d)
	}

	// Nobody outweighs the rest (3 against 3.2): the vote round runs.
	even := weighted(VoteWeight{Agent: "a", Weight: 3}, VoteWeight{Agent: "b", Weight: 1.2}, VoteWeight{Agent: "c", Weight: 1}, VoteWeight{Agent: "d", Weight: 1})
	even.MaxRounds, even.MaxAnswersPerAgent, even.DominantStop = 2, 1, true
	b = newTeam(t, even, "a", "b", "c", "d")
	for id, v := range map[string]string{"a": "18", "b": "20", "c": "20", "d": "21"} {
		b.answer(id, "Answer: "+v)
	}
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("3 is not more than 3.2: %+v", d)
	}
	if note := weightedNote(b.s, b.state(), ChosenConsensus, "b", StopConsensus); strings.Contains(note, "dominant_stop") {
		t.Fatalf("no dominance, no such note: %q", note)
	}

	// Nobody outweighs the rest but everyone answered 20 and may not answer
	// again: the vote round could only vote for 20, so round 0 is final.
	b = newTeam(t, even, "a", "b", "c", "d")
	for _, id := range []string{"a", "b", "c", "d"} {
		b.answer(id, "Answer: 20")
	}
	if d := b.decide(); d.Kind != DecideFinish || d.How != ChosenConsensus || d.Stop != StopConsensus {
		t.Fatalf("a unanimous round 0 with no answers left is final: %+v", d)
	}
	if note := weightedNote(b.s, b.state(), ChosenConsensus, "a", StopConsensus); !strings.Contains(note, "round 0 ended the run (dominant_stop): every agent answered 20 and none may answer again") {
		t.Fatalf("the note says why round 0 ended it: %q", note)
	}
	// With a second answer allowed someone could still bring a new value.
	more := even
	more.MaxAnswersPerAgent = 2
	b = newTeam(t, more, "a", "b", "c", "d")
	for _, id := range []string{"a", "b", "c", "d"} {
		b.answer(id, "Answer: 20")
	}
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("agents that may answer again keep their round: %+v", d)
	}

	// max_rounds 1: round 0 is the whole run, so the same heavy win is an
	// ordinary one and the note does not credit dominant_stop with it.
	single := heavy
	single.MaxRounds, single.DominantStop = 1, true
	b = newTeam(t, single, "a", "b", "c", "d")
	for id, v := range map[string]string{"a": "18", "b": "20", "c": "20", "d": "20"} {
		b.answer(id, "Answer: "+v)
	}
	if d := b.decide(); d.Kind != DecideFinish || d.Winner != "a" || d.How != ChosenConsensus {
		t.Fatalf("max_rounds 1: the weighted vote of round 0 decides: %+v", d)
	}
	if note := weightedNote(b.s, b.state(), ChosenConsensus, "a", StopConsensus); strings.Contains(note, "dominant_stop") {
		t.Fatalf("round 0 ended the run anyway; the note must not say dominant_stop did: %q", note)
	}

	// Both stops apply: the SPRT lead is read first and says so.
	heavy.DominantStop, heavy.EarlyStop = true, true
	b = newTeam(t, heavy, "a", "b", "c", "d")
	for id, v := range map[string]string{"a": "18", "b": "18", "c": "20", "d": "21"} {
		b.answer(id, "Answer: "+v)
	}
	if d := b.decide(); d.Kind != DecideFinish || d.How != ChosenEarlyAgreement || d.Winner != "a" {
		t.Fatalf("18 leads by 4.1 with two agents: %+v", d)
	}
}

// The unanimous stop and its note hold only for what happened: an answer
// with no final value agrees with nothing, whatever seat it has; a note
// names only the agents left; a run a timeout ended is not credited to
// dominant_stop. (Review findings on the first version, each of which this
// test caught.)
func TestDominantStopSaysOnlyWhatHappened(t *testing.T) {
	rules := weighted(VoteWeight{Agent: "a", Weight: 2}, VoteWeight{Agent: "b", Weight: 2}, VoteWeight{Agent: "c", Weight: 1.5}, VoteWeight{Agent: "d", Weight: 1.5})
	rules.MaxRounds, rules.MaxAnswersPerAgent, rules.DominantStop = 2, 1, true

	// a and b, first in team order, give no value; c and d answer 20.
	b := newTeam(t, rules, "a", "b", "c", "d")
	b.answer("a", "...")
	b.answer("b", "**")
	b.answer("c", "Answer: 20")
	b.answer("d", "Answer: 20")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("two answers without a value are not a unanimous 20: the vote round runs: %+v", d)
	}

	// a dropped after its failures; b, c and d answer 20.
	b = newTeam(t, rules, "a", "b", "c", "d")
	b.fail("a")
	b.fail("a")
	for _, id := range []string{"b", "c", "d"} {
		b.answer(id, "Answer: 20")
	}
	d := b.decide()
	if d.Kind != DecideFinish || d.Stop != StopConsensus {
		t.Fatalf("the three left answered 20 and may not answer again: %+v", d)
	}
	if note := weightedNote(b.s, b.state(), d.How, d.Winner, d.Stop); !strings.Contains(note, "every remaining agent (3 of 4) answered 20") {
		t.Fatalf("the note names only the agents left: %q", note)
	}

	// A timeout ends a round 0 that dominant_stop would also have ended:
	// the note says nothing of dominant_stop.
	heavy := weighted(VoteWeight{Agent: "a", Weight: 4}, VoteWeight{Agent: "b", Weight: 0.7}, VoteWeight{Agent: "c", Weight: 0.6}, VoteWeight{Agent: "d", Weight: 0.5})
	heavy.MaxRounds, heavy.MaxAnswersPerAgent, heavy.DominantStop = 2, 1, true
	b = newTeam(t, heavy, "a", "b", "c", "d")
	for id, v := range map[string]string{"a": "18", "b": "20", "c": "20", "d": "20"} {
		b.answer(id, "Answer: "+v)
	}
	d = Decide(b.s, b.state(), StopTimeout)
	if d.Kind != DecideFinish || d.Stop != StopTimeout {
		t.Fatalf("a timeout ends the session: %+v", d)
	}
	if note := weightedNote(b.s, b.state(), d.How, d.Winner, d.Stop); strings.Contains(note, "dominant_stop") {
		t.Fatalf("a timeout ended the run; the note must not credit dominant_stop: %q", note)
	}
}
