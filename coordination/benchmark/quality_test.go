package benchmark

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers/sim/itemmodel"
)

func smallQuality(items int) QualityConfig {
	return QualityConfig{Items: items, Seed: 3, Model: itemmodel.DefaultConfig(), Behaviour: DefaultBehaviour()}
}

func TestQualityReportsEveryProtocolOnTheSameItems(t *testing.T) {
	t.Parallel()
	rep, err := Quality(context.Background(), smallQuality(6))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != len(AllProtocols) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), len(AllProtocols))
	}
	for _, row := range rep.Rows {
		if row.N != 6 || len(row.Correct) != 6 {
			t.Errorf("%s ran %d items", row.Protocol, row.N)
		}
		if row.Accuracy < row.AccLo || row.Accuracy > row.AccHi {
			t.Errorf("%s: accuracy %.3f outside its interval [%.3f, %.3f]", row.Protocol, row.Accuracy, row.AccLo, row.AccHi)
		}
		if row.Steps < 1 || row.Tokens <= 0 || row.Cost <= 0 {
			t.Errorf("%s: steps %.1f tokens %.0f cost %g", row.Protocol, row.Steps, row.Tokens, row.Cost)
		}
	}
	single, _ := rep.Row(ProtoSingle)
	if single.Steps != 1 || single.VsSingle != 0 {
		t.Errorf("the single agent took %.1f steps and differs from itself by %g", single.Steps, single.VsSingle)
	}
	vote, _ := rep.Row(ProtoVote)
	if vote.Steps != 4 {
		t.Errorf("the round-0 vote used %.1f answers, want the 4 first answers", vote.Steps)
	}
	sc, _ := rep.Row(ProtoSC)
	if rep.SCSamples < 2 || sc.Steps != float64(rep.SCSamples) {
		t.Errorf("self-consistency: k = %d, %.1f steps", rep.SCSamples, sc.Steps)
	}
	early, _ := rep.Row(ProtoOursEarly)
	ours, _ := rep.Row(ProtoOurs)
	if early.EarlyShare == 0 || early.Steps >= ours.Steps {
		t.Errorf("early stop ended %.0f %% of items early and took %.1f steps against %.1f", 100*early.EarlyShare, early.Steps, ours.Steps)
	}
	if rep.Oracle < vote.Accuracy {
		t.Errorf("oracle %.2f below the vote %.2f", rep.Oracle, vote.Accuracy)
	}

	var md, cs, img bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, p := range AllProtocols {
		if !strings.Contains(md.String(), "| "+protocolTitles[p]+" |") {
			t.Errorf("the table has no row for %s:\n%s", p, md.String())
		}
	}
	if err := rep.CSV(&cs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(recs) != len(AllProtocols)+1 {
		t.Fatalf("CSV: %d records, %v", len(recs), err)
	}
	if err := rep.Plot(&img); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&img); err != nil {
		t.Errorf("the plot is not a PNG: %v", err)
	}
}

func TestSameSeedSameNumbers(t *testing.T) {
	t.Parallel()
	cfg := smallQuality(6)
	cfg.Protocols = []string{ProtoMassGen, ProtoOurs}
	var out []string
	for range 2 {
		rep, err := Quality(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rep.CSV(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.String())
	}
	if out[0] != out[1] {
		t.Errorf("same seed, different results:\n%s\n%s", out[0], out[1])
	}
}

func TestGSM8KReplayRunsWithoutSelfConsistency(t *testing.T) {
	t.Parallel()
	rep, err := Quality(context.Background(), QualityConfig{Items: 8, Seed: 1, Data: "../../testdata/gsm8k/example_model_solutions.jsonl",
		Behaviour: DefaultBehaviour(), Protocols: []string{ProtoSingle, ProtoVote, ProtoSC, ProtoOurs}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.Row(ProtoSC); ok || rep.Skipped[ProtoSC] == "" {
		t.Errorf("self-consistency ran on replayed data: %+v", rep.Skipped)
	}
	if rep.Data != "gsm8k" || len(rep.Members) != 4 || rep.Members[0] != "175b_verification" {
		t.Errorf("data %s, members %v", rep.Data, rep.Members)
	}
	// Problem 1 (Janet's ducks): only 175b_verification is right, so the
	// best single agent is right there.
	single, _ := rep.Row(ProtoSingle)
	if !single.Correct[0] {
		t.Error("the best GSM8K set's replayed answer to problem 1 was not scored right")
	}
}

func TestUnknownProtocolIsRefusedWithTheList(t *testing.T) {
	cfg := smallQuality(2)
	cfg.Protocols = []string{"debate"}
	if _, err := Quality(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "ours+early") {
		t.Errorf("err = %v, want the list of protocols", err)
	}
}

func TestPairedDifferenceInterval(t *testing.T) {
	a := []bool{true, true, true, false, true, false, true, true}
	b := []bool{true, false, true, false, false, false, true, true}
	d, lo, hi := pairedDiff(a, b)
	// Differences 0,1,0,0,1,0,0,0: mean 0.25, sd √(2·0.5625+6·0.0625)/7 = 0.4629.
	half := 1.96 * 0.46291 / math.Sqrt(8)
	if math.Abs(d-0.25) > 1e-9 || math.Abs(lo-(0.25-half)) > 1e-4 || math.Abs(hi-(0.25+half)) > 1e-4 {
		t.Errorf("paired diff %.4f (%.4f, %.4f), want 0.25 ± %.4f", d, lo, hi, half)
	}
}

// herding runs items through the engine with the given rules and counts
// the items whose final value is agent_a's first one although agent_a
// was wrong, and the distinct values among the first stances.
func herding(t *testing.T, h *harness, rules coordination.Rules) (followedWrongFirst, distinctFirst int) {
	t.Helper()
	var agents []coordination.Agent
	seats := map[string]itemmodel.Seat{}
	for m := range h.set.Members {
		seats[agentID(m)] = itemmodel.Seat{Member: m}
		agents = append(agents, coordination.Agent{ID: agentID(m), Model: h.spec(m)})
	}
	svc, err := h.service(seats)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.set.Items {
		r, err := h.session(context.Background(), svc, i, agents, rules)
		if err != nil {
			t.Fatal(err)
		}
		truth := itemmodel.Value(h.set.Items[i].Truth)
		seen := map[string]bool{}
		for _, v := range r.firstValues {
			seen[v] = true
		}
		distinctFirst += len(seen)
		if r.firstValues[0] != truth && !r.correct && r.finalValue == r.firstValues[0] {
			followedWrongFirst++
		}
	}
	return followedWrongFirst, distinctFirst
}

// TestLabelOrderRotationAndBlindFirstAnswersMatter pins that the settings
// MassGen's older behaviour differs by have effects through the sims'
// position and self biases, rather than none: without rotation everyone is
// shown agent_a first (alphabetical labels) and follows it more, and
// without blind first answers the team's first answers are less diverse.
func TestLabelOrderRotationAndBlindFirstAnswersMatter(t *testing.T) {
	t.Parallel()
	m := itemmodel.DefaultConfig()
	m.Lineup, m.Rho, m.Seed = []float64{0.45, 0.8, 0.8, 0.8}, 0.3, 5
	set, err := itemmodel.Synthetic(m, 30)
	if err != nil {
		t.Fatal(err)
	}
	b := AgentBehaviour{Conformity: 0.5, TruthBias: 1, SelfBias: 0.2, PositionBias: 3, Revise: 0.1}
	h := &harness{cfg: QualityConfig{Seed: 5, Behaviour: b}, set: set, prices: prices(nil, 4), store: memstore.New()}

	ours, oursDistinct := herding(t, h, coordination.Rules{})
	fixed := coordination.Rules{Aliases: coordination.AliasesAlphabetical, RotateOwnLast: new(bool)}
	firstShown, _ := herding(t, h, fixed)
	if firstShown <= ours {
		t.Errorf("agent_a's wrong first answer won %d times with alphabetical labels and no rotation, %d with ours: no position effect", firstShown, ours)
	}
	seeing := coordination.Rules{BlindFirst: new(bool)}
	_, seeingDistinct := herding(t, h, seeing)
	if seeingDistinct >= oursDistinct {
		t.Errorf("first stances held %d distinct values when agents saw earlier answers, %d when blind: no effect", seeingDistinct, oursDistinct)
	}
	t.Logf("agent_a's wrong first answer won: ours %d, alphabetical+no rotation %d; distinct first stances: blind %d, not blind %d", ours, firstShown, oursDistinct, seeingDistinct)

	// With no biases the position effect goes away (up to the noise of
	// different draws).
	h.cfg.Behaviour = AgentBehaviour{Conformity: 0.5, TruthBias: 1, Revise: 0.1}
	a, _ := herding(t, h, coordination.Rules{})
	c, _ := herding(t, h, fixed)
	if c-a > (firstShown-ours)/2 {
		t.Errorf("without a position bias, label order still moved the outcome by %d items (with it: %d)", c-a, firstShown-ours)
	}
}
