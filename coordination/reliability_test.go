package coordination

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// A history drawn from agents of known accuracy (right value "r", wrong
// answers spread over three values): the estimate ranks them by accuracy
// from agreement alone, and is the same on every call.
func TestEstimateReliabilityRanksAgentsByAgreementWithoutLabels(t *testing.T) {
	acc := map[string]float64{"strong": 0.9, "mid": 0.7, "weak": 0.45}
	r := rand.New(rand.NewPCG(1, 2))
	var hist []PastItem
	for i := range 400 {
		it := PastItem{}
		for _, k := range []string{"strong", "mid", "weak"} {
			v := fmt.Sprintf("right%d", i)
			if r.Float64() >= acc[k] {
				v = fmt.Sprintf("wrong%d-%d", i, r.IntN(3))
			}
			it[k] = v
		}
		hist = append(hist, it)
	}
	keys := []string{"weak", "strong", "mid"}
	got := EstimateReliability(hist, keys)
	by := map[string]Reliability{}
	for _, e := range got {
		by[e.Key] = e
	}
	if !(by["strong"].Weight > by["mid"].Weight && by["mid"].Weight > by["weak"].Weight) {
		t.Fatalf("weights must follow accuracy: %+v", got)
	}
	// EM overrates the strongest of few agents (the weight cap bounds it)
	// and rates the others near their accuracy.
	if by["strong"].P < acc["strong"] || by["strong"].Weight > maxWeight {
		t.Errorf("strong: estimated %.2f (weight %.2f), drawn at %.2f", by["strong"].P, by["strong"].Weight, acc["strong"])
	}
	for _, k := range []string{"mid", "weak"} {
		if d := by[k].P - acc[k]; d < -0.1 || d > 0.1 {
			t.Errorf("%s: estimated %.2f, drawn at %.2f", k, by[k].P, acc[k])
		}
	}
	if by["strong"].Items != 400 || by["strong"].Agreed < 340 {
		t.Errorf("strong agreed %d of %d", by["strong"].Agreed, by["strong"].Items)
	}
	if again := EstimateReliability(hist, keys); !reflect.DeepEqual(got, again) {
		t.Fatal("the estimate must be deterministic")
	}
	if !strings.Contains(by["strong"].Reason(), "past items") {
		t.Fatalf("the reason says where the weight comes from: %q", by["strong"].Reason())
	}
	// Shared counts the items where another agent gave the same answer,
	// whoever was right: what agreement can see.
	for _, e := range got {
		want := 0
		for _, it := range hist {
			for _, k := range keys {
				if k != e.Key && it[k] == it[e.Key] {
					want++
					break
				}
			}
		}
		if e.Shared != want || !strings.Contains(e.Reason(), fmt.Sprintf("with another agent's in %d (", want)) {
			t.Errorf("%s shared its answer on %d items, estimate says %d: %q", e.Key, want, e.Shared, e.Reason())
		}
	}
	for _, e := range EstimateReliability(nil, keys) {
		if e.Weight != 1 || e.Items != 0 {
			t.Fatalf("no history: every agent counts 1, got %+v", e)
		}
	}
}

func weighted(ws ...VoteWeight) Rules {
	return Rules{Consensus: RuleWeighted, AnswerFormat: FormatShort, MaxRounds: 1, Weights: ws}
}

// consensus weighted with one step each: the weighted vote of the first
// answers. A heavy agent outweighs two light ones that agree; equal weights
// are a plurality.
func TestWeightedRuleLetsAHeavyAgentOutweighTwoLightOnes(t *testing.T) {
	b := newTeam(t, weighted(VoteWeight{Agent: "a", Weight: 3}, VoteWeight{Agent: "b", Weight: 1}, VoteWeight{Agent: "c", Weight: 1}), "a", "b", "c")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 5")
	b.answer("c", "Answer: 5")
	d := b.decide()
	if d.Kind != DecideFinish || d.Winner != "a" || d.How != ChosenConsensus || d.Stop != StopConsensus {
		t.Fatalf("a's weight 3 beats b and c's 2: %+v", d)
	}
	b = newTeam(t, weighted(), "a", "b", "c")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 5")
	b.answer("c", "Answer: 5")
	if d := b.decide(); d.Winner != "b" || d.How != ChosenConsensus {
		t.Fatalf("equal weights: the value two agents hold wins, b first: %+v", d)
	}
	// The result says how each ballot counted.
	c := consensusView(b.s, b.state())
	if len(c.Weights) != 3 || c.Weights[0].Weight != 1 || !strings.Contains(c.Weights[0].Reason, "no weight") {
		t.Fatalf("weights in the result: %+v", c.Weights)
	}
	st := b.state()
	if c.WeightedTally[st.Agent("b").LatestAnswer.Label] != 2 || c.WeightedTally[st.Agent("a").LatestAnswer.Label] != 1 {
		t.Fatalf("weighted tally by label: %v", c.WeightedTally)
	}
}

// After a vote round, an agent's answer and its vote both count: a strong
// agent talked round by two weak ones still holds half its weight on its
// own answer.
func TestWeightedRuleCountsTheAnswerAndTheVote(t *testing.T) {
	r := weighted(VoteWeight{Agent: "a", Weight: 3}, VoteWeight{Agent: "b", Weight: 1}, VoteWeight{Agent: "c", Weight: 1})
	r.MaxRounds, r.MaxAnswersPerAgent = 2, 1
	b := newTeam(t, r, "a", "b", "c")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 5")
	b.answer("c", "Answer: 5")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("the vote round is due: %+v", d)
	}
	b.vote("a", "b") // a is talked round
	b.vote("b", "b")
	b.vote("c", "c")
	// 4: a's answer 3; 5: a's vote 3 + b, c answers 2 + b, c votes 2 = 7.
	if d := b.decide(); d.Winner != "b" || d.How != ChosenConsensus {
		t.Fatalf("5 has 7 of 10: %+v", d)
	}
	b = newTeam(t, r, "a", "b", "c")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 5")
	b.answer("c", "Answer: 6")
	b.vote("a", "a")
	b.vote("b", "b")
	b.vote("c", "b")
	// 4: 3+3 = 6; 5: 1+1+1 = 3; 6: 1.
	if d := b.decide(); d.Winner != "a" {
		t.Fatalf("a held its answer: %+v", d)
	}
}

// The SPRT stop: after round 0 the session ends when the leading value's
// weight is log 19 ahead of the next and two agents hold it; one heavy
// agent alone never stops it (the guard).
func TestWeightedEarlyStopNeedsTheLeadAndTwoAgents(t *testing.T) {
	r := weighted(VoteWeight{Agent: "a", Weight: 3.5}, VoteWeight{Agent: "b", Weight: 3.4}, VoteWeight{Agent: "c", Weight: 0.5}, VoteWeight{Agent: "d", Weight: 10})
	r.MaxRounds, r.MaxAnswersPerAgent, r.EarlyStop = 2, 1, true
	b := newTeam(t, r, "a", "b", "c", "d")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 4")
	b.answer("c", "Answer: 5")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("round 0 is not over: %+v", d)
	}
	b.answer("d", "Answer: 9")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("d's 10 alone leads 6.9 but one agent is not agreement: %+v", d)
	}
	b = newTeam(t, r, "a", "b", "c", "d")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 4")
	b.answer("c", "Answer: 5")
	b.answer("d", "Answer: 4")
	d := b.decide()
	if d.Kind != DecideFinish || d.How != ChosenEarlyAgreement || d.Stop != StopEarlyAgreement || d.Winner != "d" {
		t.Fatalf("4 leads by 16.4 with three agents: %+v", d)
	}
	note := weightedNote(b.s, b.state(), ChosenEarlyAgreement, "d", StopConsensus)
	if !strings.Contains(note, "stopped after round 0: 4 leads by 16.40") || !strings.Contains(note, "3 agents hold it") {
		t.Fatalf("the note says why it stopped: %q", note)
	}
	// Equal weights: three of four agree, a lead of 2 < log 19, so the vote
	// round runs; four of four stop.
	r = weighted()
	r.MaxRounds, r.MaxAnswersPerAgent, r.EarlyStop = 2, 1, true
	b = newTeam(t, r, "a", "b", "c", "d")
	b.answer("a", "Answer: 4")
	b.answer("b", "Answer: 4")
	b.answer("c", "Answer: 4")
	b.answer("d", "Answer: 5")
	if d := b.decide(); d.Kind != DecideNothing {
		t.Fatalf("3 against 1 is odds of e^2, under 19: %+v", d)
	}
	note = weightedNote(b.s, b.state(), ChosenConsensus, "a", StopConsensus)
	if !strings.Contains(note, "4 has weight 3.00") || !strings.Contains(note, "1.00 for the next value") {
		t.Fatalf("the note says what each value weighed: %q", note)
	}
	b.vote("a", "a")
	b.vote("b", "a")
	b.vote("c", "a")
	b.vote("d", "d")
	if d := b.decide(); d.Kind != DecideFinish || d.Winner != "a" || d.How != ChosenConsensus {
		t.Fatalf("after the vote round 4 has 6 of 8: %+v", d)
	}
}

func TestWeightedRulesAreChecked(t *testing.T) {
	for _, c := range []struct {
		r    Rules
		want string
	}{
		{Rules{Consensus: RuleWeighted, AnswerFormat: FormatFree}, "consensus weighted needs answer_format short"},
		{Rules{Consensus: RuleWeighted, AnswerFormat: FormatShort, Weights: []VoteWeight{{Agent: "a", Weight: 0}}}, "weight 0 of a must be above 0"},
		{Rules{Consensus: RuleWeighted, AnswerFormat: FormatShort, Weights: []VoteWeight{{Agent: "a", Weight: 1}, {Agent: "a", Weight: 2}}}, "weights name a twice"},
		{Rules{Consensus: RuleMajority, Weights: []VoteWeight{{Agent: "a", Weight: 1}}}, "weights count only under consensus weighted"},
		{Rules{Consensus: RulePlurality, DominantStop: true}, "dominant_stop reads the weights of consensus weighted, not plurality"},
	} {
		err := c.r.Validate()
		if !errors.Is(err, ErrBadSettings) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
	ok := Rules{Consensus: RuleWeighted, AnswerFormat: FormatShort, Weights: []VoteWeight{{Agent: "a", Weight: 2.5}}}
	if _, err := ok.Normalize(); err != nil {
		t.Fatal(err)
	}
	if got := (Rules{}).Over(ok); !reflect.DeepEqual(got.Weights, ok.Weights) {
		t.Fatalf("weights survive an overlay that sets none: %+v", got.Weights)
	}
	other := []VoteWeight{{Agent: "b", Weight: 1}}
	if got := (Rules{Weights: other}).Over(ok); !reflect.DeepEqual(got.Weights, other) {
		t.Fatalf("weights given replace the base's: %+v", got.Weights)
	}
}
