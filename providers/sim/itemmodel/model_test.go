package itemmodel

import (
	"errors"
	"math"
	"os"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// The validation targets of consensus-quality.md §3.10 pin the correlation
// model, which no protocol setting can move: they are computed here from the
// model itself over many items, within ±1.5 pt.
const tolerance = 0.015

func seats(n int) []Seat {
	out := make([]Seat, n)
	for m := range out {
		out[m] = Seat{Member: m}
	}
	return out
}

func round0(t *testing.T, c Config, n int) (plurality, oracle float64) {
	t.Helper()
	set, err := Synthetic(c, n)
	if err != nil {
		t.Fatal(err)
	}
	p, o, err := set.Round0(seats(len(c.Lineup)))
	if err != nil {
		t.Fatal(err)
	}
	return p, o
}

func TestThreeIndependentAgentsAtEightyFivePercentVoteNinetyFive(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.Lineup, c.Rho = []float64{0.85, 0.85, 0.85}, 0
	p, _ := round0(t, c, 30000)
	t.Logf("round-0 plurality, 3 × 0.85, independent: %.2f %%", 100*p)
	if math.Abs(p-0.952) > tolerance {
		t.Errorf("round-0 plurality of three independent agents at p = 0.85: %.2f %%, want 95.2 ± 1.5", 100*p)
	}
}

func TestCorrelatedErrorsShrinkTheVoteGainToTwoPoints(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.Lineup, c.Rho = []float64{0.85, 0.85, 0.85}, 0.8
	p, _ := round0(t, c, 30000)
	t.Logf("round-0 plurality, 3 × 0.85, rho 0.8: %.2f %%", 100*p)
	if math.Abs(p-0.871) > tolerance {
		t.Errorf("round-0 plurality at p = 0.85, rho = 0.8: %.2f %%, want 87.1 ± 1.5", 100*p)
	}
}

func TestMassGenLineupOracleMatchesThePublishedOne(t *testing.T) {
	t.Parallel()
	c := DefaultConfig() // MassGen's lineup at rho = 0.75
	p, o := round0(t, c, 30000)
	t.Logf("MassGen lineup, rho 0.75: oracle %.2f %%, round-0 plurality %.2f %%", 100*o, 100*p)
	if o < 0.935-tolerance || o > 0.952+tolerance {
		t.Errorf("oracle of the MassGen lineup at rho = 0.75: %.2f %%, want 93.5–95.2 (±1.5)", 100*o)
	}
}

func TestMembersKeepTheirStandAloneAccuracy(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	set, err := Synthetic(c, 20000)
	if err != nil {
		t.Fatal(err)
	}
	for m, p := range c.Lineup {
		for _, sample := range []int{0, 3} {
			right := 0
			for i := range set.Items {
				a, _ := set.Answer(i, Seat{Member: m, Sample: sample})
				if i < 500 && a.Correct != (Value(a.Value) == Value(set.Items[i].Truth)) {
					t.Fatalf("item %d: correct=%v but value %s vs truth %s", i, a.Correct, a.Value, set.Items[i].Truth)
				}
				if a.Correct {
					right++
				}
			}
			if got := float64(right) / float64(len(set.Items)); math.Abs(got-p) > 0.012 {
				t.Errorf("member %d sample %d is right %.3f of the time, want %.3f", m, sample, got, p)
			}
		}
	}
}

// phi is the correlation of two members' correctness over a set.
func phi(set *Set, a, b Seat) float64 {
	var n, sa, sb, sab float64
	for i := range set.Items {
		x, _ := set.Answer(i, a)
		y, _ := set.Answer(i, b)
		n++
		if x.Correct {
			sa++
		}
		if y.Correct {
			sb++
		}
		if x.Correct && y.Correct {
			sab++
		}
	}
	pa, pb, pab := sa/n, sb/n, sab/n
	return (pab - pa*pb) / math.Sqrt(pa*(1-pa)*pb*(1-pb))
}

func TestSamplesOfOneMemberCorrelateMoreThanMembers(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	set, err := Synthetic(c, 40000)
	if err != nil {
		t.Fatal(err)
	}
	between := phi(set, Seat{Member: 0}, Seat{Member: 1})
	within := phi(set, Seat{Member: 0}, Seat{Member: 0, Sample: 1})
	if !(within > between+0.05) {
		t.Errorf("phi within a member %.3f, between members %.3f: samples should agree more", within, between)
	}
	// ρ = 0.8 gives the φ ≈ 0.53 measured between frontier models (§3.2).
	c.Rho, c.Lineup = 0.8, []float64{0.85, 0.85}
	set, _ = Synthetic(c, 40000)
	if f := phi(set, Seat{Member: 0}, Seat{Member: 1}); math.Abs(f-0.53) > 0.05 {
		t.Errorf("phi at rho 0.8 = %.3f, want ≈ 0.53", f)
	}
}

func TestWrongAnswersClusterOnTheAttractor(t *testing.T) {
	t.Parallel()
	set, err := Synthetic(DefaultConfig(), 40000)
	if err != nil {
		t.Fatal(err)
	}
	both, same := 0, 0
	for i := range set.Items {
		x, _ := set.Answer(i, Seat{Member: 0})
		y, _ := set.Answer(i, Seat{Member: 1})
		if !x.Correct && !y.Correct {
			both++
			if x.Value == y.Value {
				same++
			}
		}
	}
	// 0.75 to the attractor, the rest spread over all 3 wrong options:
	// 0.833² + 2·0.083² ≈ 0.71, the agreement measured between frontier
	// models (consensus-quality.md §3.3).
	if got := float64(same) / float64(both); math.Abs(got-0.708) > 0.03 {
		t.Errorf("both wrong agree %.3f of the time, want ≈ 0.71", got)
	}
}

func TestTeamHandsFirstAnswersToSims(t *testing.T) {
	set, err := Synthetic(DefaultConfig(), 50)
	if err != nil {
		t.Fatal(err)
	}
	m, err := set.Team(map[string]Seat{"agent_a": {Member: 3}})
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range set.Items {
		got, ok := m.FirstAnswer(sim.ItemQuery{Task: it.Task, AgentID: "agent_a"})
		want, _ := set.Answer(i, Seat{Member: 3})
		if !ok || got.Truth != it.Truth || got.Correct != want.Correct || (!want.Correct && got.Wrong != want.Value) {
			t.Fatalf("item %d: %+v, want %+v", i, got, want)
		}
	}
	if _, ok := m.FirstAnswer(sim.ItemQuery{Task: set.Items[0].Task, AgentID: "agent_z"}); ok {
		t.Error("an agent without a seat got an answer")
	}
	if _, ok := m.FirstAnswer(sim.ItemQuery{Task: "What is 17 * 23?", AgentID: "agent_a"}); ok {
		t.Error("a task outside the set got an answer")
	}
	if _, err := set.Team(map[string]Seat{"x": {Member: 9}}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("a seat outside the lineup: %v", err)
	}
}

func TestBadConfigsAreRefusedWithTheProblem(t *testing.T) {
	for _, c := range []Config{
		{Lineup: nil, Options: 4},
		{Lineup: []float64{1.2}, Options: 4},
		{Lineup: []float64{0.8}, Rho: 1, Options: 4},
		{Lineup: []float64{0.8}, Options: 1},
		{Lineup: []float64{0.8}, Options: 4, Attractor: 2},
	} {
		if _, err := Synthetic(c, 10); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestGSM8KReplaysTheReleasedSolutions(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../../testdata/gsm8k/example_model_solutions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := ReadGSM8K(f, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Items) != 1319 {
		t.Fatalf("%d problems, want 1319", len(set.Items))
	}
	// The released accuracies (data/README.md).
	want := map[string]float64{"175b_verification": 0.563, "6b_verification": 0.390, "175b_finetuning": 0.347, "6b_finetuning": 0.217}
	for m, name := range set.Members {
		if math.Abs(set.Accuracy[m]-want[name]) > 0.001 {
			t.Errorf("%s: %.4f, want %.3f", name, set.Accuracy[m], want[name])
		}
	}
	// Janet's ducks: only 175b_verification gets 18; 6b_finetuning says 26.
	if a, _ := set.Answer(0, Seat{Member: 0}); !a.Correct || a.Value != "18" {
		t.Errorf("175b_verification on problem 1: %+v", a)
	}
	if a, _ := set.Answer(0, Seat{Member: 3}); a.Correct || a.Value != "26" {
		t.Errorf("6b_finetuning on problem 1: %+v", a)
	}
	if _, err := set.Answer(0, Seat{Sample: 1}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("a second sample of replayed data: %v", err)
	}
	if set.Best() != 0 {
		t.Errorf("best member %d", set.Best())
	}
	p, o, _ := set.Round0(seats(4))
	// Oracle of the four sets: 67.2 % (consensus-quality.md §3.11).
	if math.Abs(o-0.672) > 0.002 {
		t.Errorf("oracle of the four sets %.4f, want 0.672", o)
	}
	t.Logf("GSM8K replay: round-0 plurality %.1f %%, oracle %.1f %%", 100*p, 100*o)
}
