package benchmark

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/sim/itemmodel"
)

// The weighted protocols: weights from the items before each one, the weak
// member weighed lowest, the same table for the same seed, and a listing
// order that moves the weighted round-0 vote not at all.
func TestWeightedProtocolsLearnWeightsFromHistoryAndIgnoreTheListing(t *testing.T) {
	t.Parallel()
	cfg := smallQuality(120)
	cfg.Protocols = []string{ProtoSingle, ProtoWeighted, ProtoWeightedEarly, ProtoEqualEarly}
	rep, err := Quality(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Weights) != 4 {
		t.Fatalf("weights of the last item: %+v", rep.Weights)
	}
	weak := rep.Weights[3] // member 3 is the 0.682 agent
	for _, w := range rep.Weights[:3] {
		if w.Weight <= weak.Weight {
			t.Errorf("the 68 %% agent weighs %.2f, a 85 %% one %.2f", weak.Weight, w.Weight)
		}
	}
	if !strings.Contains(weak.Reason, "of 119 past items") {
		t.Errorf("item 120's weights come from the 119 before it: %q", weak.Reason)
	}
	w, _ := rep.Row(ProtoWeighted)
	if w.Steps != 4 || w.Rounds != 1 {
		t.Errorf("the weighted round-0 vote took %.1f steps in %.1f rounds, want one answer each", w.Steps, w.Rounds)
	}
	early, _ := rep.Row(ProtoWeightedEarly)
	if early.EarlyShare == 0 || early.Steps >= 8 {
		t.Errorf("the SPRT stop ended %.0f %% of items, %.1f steps", 100*early.EarlyShare, early.Steps)
	}
	again, err := Quality(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cfg.Protocols {
		a, _ := rep.Row(p)
		b, _ := again.Row(p)
		if !slices.Equal(a.Correct, b.Correct) || a.Tokens != b.Tokens {
			t.Errorf("%s differs between two runs of one seed", p)
		}
	}
	cfg.Listing = []int{3, 1, 0, 2}
	moved, err := Quality(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := moved.Row(ProtoWeighted)
	if m.Accuracy != w.Accuracy {
		t.Errorf("the weighted round-0 vote reads no order: %.3f listed as given, %.3f weak first", w.Accuracy, m.Accuracy)
	}
	for i := range rep.Weights {
		if moved.Weights[i].Weight != rep.Weights[i].Weight {
			t.Errorf("member %d weighs %.2f listed as given, %.2f weak first: weights follow the member", i, rep.Weights[i].Weight, moved.Weights[i].Weight)
		}
	}
}

func TestOrdersAreAllOrASeededSampleStartingWithTheLineup(t *testing.T) {
	if got := Orders(3, 10, 1); len(got) != 6 {
		t.Fatalf("3 members: all 6 orders, got %d", len(got))
	}
	got := Orders(4, 6, 1)
	if len(got) != 6 || !slices.Equal(got[0], []int{0, 1, 2, 3}) {
		t.Fatalf("a sample of 6 starting with the lineup's order: %v", got)
	}
	seen := map[string]bool{}
	for _, o := range got {
		seen[fmt.Sprint(o)] = true
	}
	if len(seen) != 6 {
		t.Fatalf("orders repeat: %v", got)
	}
	if !reflect.DeepEqual(Orders(4, 6, 1), got) || reflect.DeepEqual(Orders(4, 6, 2), got) {
		t.Fatal("the sample is the seed's")
	}
	if _, err := Quality(context.Background(), QualityConfig{Items: 2, Seed: 1, Model: itemmodel.DefaultConfig(), Behaviour: DefaultBehaviour(), Listing: []int{0, 0, 1, 2}}); err == nil || !strings.Contains(err.Error(), "is not an order") {
		t.Fatalf("a listing that repeats a member: %v", err)
	}
}

// dominant_stop in the bench: where nobody outweighs the rest (the default
// lineup, after the first items) the protocol answers as the vote round's,
// item for item, and skips the round only where every agent gave the same
// value (votes could not change it), so it takes fewer steps; on the GSM8K
// replay, one strong model among weak ones, its weight comes to outweigh
// the rest and round 0 is final, so the strong model is no longer talked
// out of its answers.
func TestDominantStopSkipsTheVoteRoundOnlyWhereOneMemberOutweighsTheRest(t *testing.T) {
	t.Parallel()
	cfg := smallQuality(120)
	cfg.Protocols = []string{ProtoWeightedRound, ProtoWeightedDominant}
	rep, err := Quality(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	round, _ := rep.Row(ProtoWeightedRound)
	dom, _ := rep.Row(ProtoWeightedDominant)
	if !slices.Equal(round.Correct, dom.Correct) || round.RightToWrong != dom.RightToWrong {
		t.Errorf("nobody dominates the default lineup: the two protocols must answer alike item for item")
	}
	if dom.Steps >= round.Steps-1 || dom.Tokens >= round.Tokens {
		t.Errorf("unanimous items should skip the vote round: steps %.2f vs %.2f, tokens %.0f vs %.0f", dom.Steps, round.Steps, dom.Tokens, round.Tokens)
	}

	// The GSM8K replay: one model much stronger than three weak ones whose
	// wrong answers spread over many values.
	cfg = QualityConfig{Items: 200, Seed: 1, Data: "../../testdata/gsm8k/example_model_solutions.jsonl", Behaviour: DefaultBehaviour(),
		Protocols: []string{ProtoWeightedRound, ProtoWeightedDominant}}
	rep, err = Quality(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	round, _ = rep.Row(ProtoWeightedRound)
	dom, _ = rep.Row(ProtoWeightedDominant)
	if strong := rep.Weights[0].Weight; strong <= rep.Weights[1].Weight+rep.Weights[2].Weight+rep.Weights[3].Weight {
		t.Fatalf("the strongest model should outweigh the rest by item 200: %+v (%v)", rep.Weights, rep.Members)
	}
	if dom.Steps >= round.Steps-1 || dom.RightToWrong >= round.RightToWrong {
		t.Errorf("round 0 should end most items: steps %.2f vs %.2f, right→wrong %d vs %d", dom.Steps, round.Steps, dom.RightToWrong, round.RightToWrong)
	}
}

// The hazard lineup of docs/BENCHMARKS.md ("One strong member among weak
// ones"): 0.9, 0.3, 0.25, 0.2, twenty options, no attractor, ρ 0.75. On its
// first 120 items (seed 3) the 0.9 and the 0.3 member agree with the other
// three equally often — the weak members are right only on the easy items,
// where everyone is — so no estimate from agreement alone can rank them
// there. Once the history tells them apart the estimate must follow the
// strong member so far that it outweighs the other three together: every
// weighted answer is then its answer, as accurate as the best single member.
func TestAgreementFindsTheStrongMemberAmongWeakOnesOnceTheHistoryTellsThemApart(t *testing.T) {
	t.Parallel()
	cfg := itemmodel.Config{Lineup: []float64{0.9, 0.3, 0.25, 0.2}, Rho: 0.75, SampleRho: 0.9, Options: 20, Seed: 3}
	set, err := itemmodel.Synthetic(cfg, 1000)
	if err != nil {
		t.Fatal(err)
	}
	hist := make([]coordination.PastItem, len(set.Items))
	agreed := make([]int, len(set.Members))
	for i := range hist {
		hist[i] = coordination.PastItem{}
		for m, key := range set.Members {
			a, err := set.Answer(i, itemmodel.Seat{Member: m})
			if err != nil {
				t.Fatal(err)
			}
			hist[i][key] = itemmodel.Value(a.Value)
		}
		for m, key := range set.Members {
			for _, other := range set.Members {
				if i < 120 && other != key && hist[i][other] == hist[i][key] {
					agreed[m]++
				}
			}
		}
	}
	if d := agreed[0] - agreed[1]; d < -2 || d > 2 {
		t.Fatalf("the first 120 items should not tell the 0.9 and 0.3 members apart by agreement (%d and %d): the docs' account of the hazard is out of date", agreed[0], agreed[1])
	}
	for n := 400; n <= len(hist); n += 100 {
		var strong coordination.Reliability
		others := 0.0
		for _, r := range coordination.EstimateReliability(hist[:n], set.Members) {
			if r.Key == set.Members[0] {
				strong = r
			} else {
				others += r.Weight
			}
		}
		if strong.Weight <= others {
			t.Errorf("after %d items the 0.9 member weighs %.2f against %.2f for the other three together", n, strong.Weight, others)
		}
	}
}
