package itemmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// MassGenLineup is the stand-alone GPQA-Diamond accuracy of the four models
// behind MassGen's published result (Gemini 2.5 Pro, Grok 4, GPT-5, Claude
// Sonnet 4; consensus-quality.md §1.8): three strong agents and a weaker
// fourth.
var MassGenLineup = []float64{0.859, 0.854, 0.848, 0.682}

// ErrBadConfig is wrapped by every configuration problem.
var ErrBadConfig = errors.New("bad item model")

// Config is a synthetic item set: who answers, how their errors correlate
// and how wrong answers cluster.
type Config struct {
	// Lineup is each member's stand-alone accuracy, in [0, 1].
	Lineup []float64
	// Rho is the tetrachoric correlation of two different members'
	// correctness: the share of the latent variance that is the item's
	// difficulty. ≈0.8 for frontier models on knowledge MCQ, 0.6–0.7 for
	// mid models on reasoning (consensus-quality.md §3.2).
	Rho float64
	// SampleRho is the same correlation between two samples of one member
	// (self-consistency); it is raised to Rho when lower.
	SampleRho float64
	// Options is the number of answer options per item (the right one and
	// Options−1 wrong ones).
	Options int
	// Attractor is the share of wrong answers that go to the item's
	// attractor; the rest spread evenly over all wrong options. 0.75 with 4
	// options gives the ≈0.71 agreement-when-both-wrong measured between
	// frontier models (§3.3).
	Attractor float64
	// Seed fixes every draw.
	Seed int64
}

// DefaultConfig is MassGen's lineup at ρ = 0.75 with four options.
func DefaultConfig() Config {
	return Config{Lineup: MassGenLineup, Rho: 0.75, SampleRho: 0.9, Options: 4, Attractor: 0.75, Seed: 1}
}

func (c Config) check() error {
	var problems []string
	if len(c.Lineup) == 0 {
		problems = append(problems, "the lineup is empty; give each agent's stand-alone accuracy, e.g. 0.86,0.85,0.68")
	}
	for i, p := range c.Lineup {
		if !(p >= 0 && p <= 1) {
			problems = append(problems, fmt.Sprintf("accuracy %g of agent %d must be between 0 and 1", p, i+1))
		}
	}
	if !(c.Rho >= 0 && c.Rho < 1) {
		problems = append(problems, fmt.Sprintf("rho %g must be at least 0 and below 1", c.Rho))
	}
	if !(c.SampleRho >= 0 && c.SampleRho < 1) {
		problems = append(problems, fmt.Sprintf("sample rho %g must be at least 0 and below 1", c.SampleRho))
	}
	if c.Options < 2 {
		problems = append(problems, fmt.Sprintf("options %d must be at least 2 (the right answer and a wrong one)", c.Options))
	}
	if !(c.Attractor >= 0 && c.Attractor <= 1) {
		problems = append(problems, fmt.Sprintf("attractor share %g must be between 0 and 1", c.Attractor))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrBadConfig, strings.Join(problems, "; "))
	}
	return nil
}

// Item is one task and its right answer.
type Item struct {
	Task  string
	Truth string // as an answer writes it
}

// Answer is one agent's first answer to one item.
type Answer struct {
	Value   string // as an answer writes it
	Correct bool
}

// Seat says which member an agent is, and which of its samples: agents of a
// self-consistency team are samples 0, 1, … of one member.
type Seat struct {
	Member int
	Sample int
}

// Set is a set of items with a lineup of members whose first answers it
// decides. It is immutable and safe for concurrent use.
type Set struct {
	// Name says where the items come from ("synthetic", "gsm8k").
	Name  string
	Items []Item
	// Members names the lineup; Accuracy is each member's stand-alone
	// accuracy (configured, or measured on replayed data).
	Members  []string
	Accuracy []float64
	// Sampled tells whether a member has more than one sample (replayed
	// data has one).
	Sampled bool

	byTask map[string]int
	answer func(item int, seat Seat) Answer
}

// Answer is the first answer of a seat to item i.
func (s *Set) Answer(i int, seat Seat) (Answer, error) {
	if i < 0 || i >= len(s.Items) {
		return Answer{}, fmt.Errorf("%w: item %d is outside the set's %d items", ErrBadConfig, i, len(s.Items))
	}
	if err := s.checkSeat(seat); err != nil {
		return Answer{}, err
	}
	return s.answer(i, seat), nil
}

func (s *Set) checkSeat(seat Seat) error {
	switch {
	case seat.Member < 0 || seat.Member >= len(s.Members):
		return fmt.Errorf("%w: member %d is outside the lineup of %d", ErrBadConfig, seat.Member, len(s.Members))
	case seat.Sample < 0 || (seat.Sample > 0 && !s.Sampled):
		return fmt.Errorf("%w: the %s set has one answer per member, so sample %d does not exist", ErrBadConfig, s.Name, seat.Sample)
	}
	return nil
}

// Best is the member with the highest stand-alone accuracy (the first of
// equals).
func (s *Set) Best() int {
	best := 0
	for m, p := range s.Accuracy {
		if p > s.Accuracy[best] {
			best = m
		}
	}
	return best
}

// Team is the sim item model for one team: agents by id, each in a seat.
// Tasks outside the set and agents without a seat are left to the sim.
func (s *Set) Team(seats map[string]Seat) (sim.ItemModel, error) {
	for id, seat := range seats {
		if err := s.checkSeat(seat); err != nil {
			return nil, fmt.Errorf("agent %s: %w", id, err)
		}
	}
	cp := make(map[string]Seat, len(seats))
	for id, seat := range seats {
		cp[id] = seat
	}
	return team{set: s, seats: cp}, nil
}

type team struct {
	set   *Set
	seats map[string]Seat
}

func (t team) FirstAnswer(q sim.ItemQuery) (sim.Item, bool) {
	i, ok := t.set.byTask[q.Task]
	seat, seated := t.seats[q.AgentID]
	if !ok || !seated {
		return sim.Item{}, false
	}
	a := t.set.answer(i, seat)
	it := sim.Item{Truth: t.set.Items[i].Truth, Correct: a.Correct}
	if !a.Correct {
		it.Wrong = a.Value
	}
	return it, true
}

// Synthetic builds n items for a configured lineup.
func Synthetic(c Config, n int) (*Set, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: %d items; ask for at least one", ErrBadConfig, n)
	}
	c.SampleRho = max(c.SampleRho, c.Rho)
	g := &synthetic{cfg: c, alpha: make([]float64, len(c.Lineup))}
	for m, p := range c.Lineup {
		g.alpha[m] = probit(p)
	}
	s := &Set{Name: "synthetic", Sampled: true, Accuracy: append([]float64(nil), c.Lineup...), byTask: make(map[string]int, n)}
	for m := range c.Lineup {
		s.Members = append(s.Members, fmt.Sprintf("p=%g", c.Lineup[m]))
	}
	g.options = make([][]string, n)
	for i := range n {
		r := g.rand("options", i, 0, 0)
		// Distinct values, the right one first, then the attractor; the task
		// lists them in a shuffled order, as a multiple-choice item would.
		seen := map[int]bool{}
		var vals []string
		for len(vals) < c.Options {
			v := 100 + r.IntN(9900)
			if !seen[v] {
				seen[v] = true
				vals = append(vals, strconv.Itoa(v))
			}
		}
		g.options[i] = vals
		shown := append([]string(nil), vals...)
		r.Shuffle(len(shown), func(a, b int) { shown[a], shown[b] = shown[b], shown[a] })
		task := fmt.Sprintf("Benchmark item %d (set %d): which of these values is right — %s?", i+1, c.Seed, strings.Join(shown, ", "))
		s.Items = append(s.Items, Item{Task: task, Truth: vals[0]})
		s.byTask[task] = i
	}
	s.answer = g.answer
	return s, nil
}

type synthetic struct {
	cfg     Config
	alpha   []float64
	options [][]string // right value first, the attractor second
}

// answer applies the probit model with a Gaussian copula:
//
//	correct ⇔ α_m + √ρ·z_i + √(ρs−ρ)·η_im + √(1−ρs)·ξ_ims > 0
//
// where α_m = Φ⁻¹(p_m) gives member m its stand-alone accuracy, z_i is the
// item's difficulty shared by everyone, η_im is what every sample of member
// m shares on item i, and ξ_ims is one sample's own noise. Two members then
// correlate at ρ and two samples of one member at ρs.
func (g *synthetic) answer(i int, seat Seat) Answer {
	c := g.cfg
	z := g.rand("item", i, 0, 0).NormFloat64()
	eta := g.rand("member", i, seat.Member, 0).NormFloat64()
	own := g.rand("sample", i, seat.Member, seat.Sample)
	latent := g.alpha[seat.Member] + math.Sqrt(c.Rho)*z + math.Sqrt(c.SampleRho-c.Rho)*eta + math.Sqrt(1-c.SampleRho)*own.NormFloat64()
	opts := g.options[i]
	if latent > 0 {
		return Answer{Value: opts[0], Correct: true}
	}
	wrong := opts[1+own.IntN(len(opts)-1)]
	if own.Float64() < c.Attractor {
		wrong = opts[1]
	}
	return Answer{Value: wrong}
}

// rand is an independent stream for one named draw.
func (g *synthetic) rand(name string, i, m, s int) *rand.Rand {
	var b [8]byte
	h := uint64(14695981039346656037) // FNV-1a over the name, then mixed
	for j := 0; j < len(name); j++ {
		h ^= uint64(name[j])
		h *= 1099511628211
	}
	mix := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		for _, x := range b {
			h ^= uint64(x)
			h *= 1099511628211
		}
	}
	mix(uint64(g.cfg.Seed))
	mix(uint64(i))
	mix(uint64(m))
	mix(uint64(s))
	return rand.New(rand.NewPCG(splitmix(h), splitmix(h^0x9e3779b97f4a7c15)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// probit is Φ⁻¹(p); 0 and 1 give −∞ and +∞ (never and always right).
func probit(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// Value is how two answers are compared: finalvalue.Of of a written
// value.
func Value(written string) string { return finalvalue.Of("Answer: " + written) }

// Round0 is the expected round-0 plurality accuracy of the seats over the
// whole set (a tie counts as a fair draw among the tied values) and the
// oracle accuracy (any seat right). It reads the model directly: the
// correlation model's own numbers, which no protocol setting can move.
func (s *Set) Round0(seats []Seat) (plurality, oracle float64, err error) {
	for _, seat := range seats {
		if err := s.checkSeat(seat); err != nil {
			return 0, 0, err
		}
	}
	if len(seats) == 0 {
		return 0, 0, fmt.Errorf("%w: no seats", ErrBadConfig)
	}
	values := make([]string, len(seats))
	// finalvalue.Of is the costly part of a pass over many items, and a set
	// has few distinct values per item.
	norm := map[string]string{}
	value := func(v string) string {
		n, ok := norm[v]
		if !ok {
			n = Value(v)
			norm[v] = n
		}
		return n
	}
	for i := range s.Items {
		truth := value(s.Items[i].Truth)
		anyRight := false
		for j, seat := range seats {
			a := s.answer(i, seat)
			values[j] = value(a.Value)
			anyRight = anyRight || a.Correct
		}
		if anyRight {
			oracle++
		}
		plurality += PluralityCredit(values, truth)
	}
	n := float64(len(s.Items))
	return plurality / n, oracle / n, nil
}

// PluralityCredit is the chance that a plurality vote over values, with ties
// drawn fairly, lands on truth.
func PluralityCredit(values []string, truth string) float64 {
	count := map[string]int{}
	top := 0
	for _, v := range values {
		count[v]++
		top = max(top, count[v])
	}
	if count[truth] != top {
		return 0
	}
	tied := 0
	for _, n := range count {
		if n == top {
			tied++
		}
	}
	return 1 / float64(tied)
}
