package coordination

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// Reliability weighting (docs/DESIGN.md, "Weighted votes"): how much each
// agent's answer counts, estimated without labels from how its past answers
// agreed with the team's. A one-coin Dawid–Skene model: agent m's answer is
// right with probability p_m and otherwise one of `reliabilitySpread` wrong
// values alike; EM alternates the posterior over each past item's values
// with the agents' p. The weight of an answer is its log-likelihood ratio,
// log(p·spread/(1−p)), so summed weights compare values the way a Bayes
// vote does, and a value's lead in summed weights is the log-odds an SPRT
// stop reads.

// reliabilitySpread is how many wrong values a wrong answer is spread over
// in the model. Short answers to open questions have many; multiple choice
// has three. Three is the conservative end: it keeps a lone strong agent
// from being outvoted by two weak ones that agree by accident.
const reliabilitySpread = 3

// Weight bounds: a weight never drops to zero (an agent always counts a
// little) nor grows without bound (a short history is not certainty).
const (
	minWeight = 0.05
	maxWeight = 4.0
)

// PastItem is one earlier item's first answers by agent key (an agent's
// model, or its seat in a benchmark), final values as finalvalue.Of gives
// them; an agent that gave none is absent.
type PastItem map[string]string

// VoteWeight is how much one agent's answer and vote count, and why.
type VoteWeight struct {
	Agent  string  `json:"agent_id" yaml:"agent_id"`
	Weight float64 `json:"weight" yaml:"weight"`
	// Reason says where the weight comes from, in words a person reads.
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
}

// Reliability is one agent key's estimate over a history.
type Reliability struct {
	Key string
	// P is the estimated chance its first answer is right.
	P float64
	// Weight is log(P·spread/(1−P)), clamped.
	Weight float64
	// Agreed is how many past items its answer matched the team's most
	// likely value on; Items how many it answered.
	Agreed, Items int
	// Shared is how many of those items another agent gave the same answer
	// on: the evidence the weight rests on. Agreed alone is circular for a
	// heavy agent (the team's answer is then its own), so the reason shows
	// both: an agent that agreed with the team in 119 of 119 items but
	// shared its answer in 45 is rated on those 45.
	Shared int
}

// Reason is the weight in words: "counts 1.40: its first answer agreed with
// the team's weighted answer in 37 of 41 past items, with another agent's
// in 30".
func (r Reliability) Reason() string { return r.reason("past items") }

func (r Reliability) reason(past string) string {
	if r.Items == 0 {
		return "counts 1: no " + past + " to judge it by"
	}
	return fmt.Sprintf("counts %.2f: its first answer agreed with the team's weighted answer in %d of %d %s, with another agent's in %d (estimated right %.0f %% of the time)",
		r.Weight, r.Agreed, r.Items, past, r.Shared, 100*r.P)
}

// EstimateReliability fits the one-coin model to the history and returns
// each key's estimate, keys sorted. It reads answers only, never a right
// value: agreement is all it has. Deterministic: EM from equal p, a fixed
// number of iterations at most, values visited in sorted order.
func EstimateReliability(history []PastItem, keys []string) []Reliability {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	p := make([]float64, len(keys))
	for k := range p {
		p[k] = 0.6 // a mild prior lean that agents beat chance; EM moves it
	}
	// Each item indexed once: its values in sorted order, each key's answer
	// as an index into them (−1: none), and the posterior over them.
	type post struct {
		values []string
		answer []int
		prob   []float64
	}
	posts := make([]post, len(history))
	for i, it := range history {
		var vs []string
		for _, k := range keys {
			if v, ok := it[k]; ok && v != "" && !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
		slices.Sort(vs)
		ans := make([]int, len(keys))
		for j, k := range keys {
			ans[j] = -1
			if v, ok := it[k]; ok && v != "" {
				ans[j] = slices.Index(vs, v)
			}
		}
		posts[i] = post{values: vs, answer: ans, prob: make([]float64, len(vs))}
	}
	// posterior fills the item's posterior from every agent's answer.
	// Judging an agent against the others only was tried and dropped: with
	// three agents its estimates sank together towards chance (0.60 for an
	// agent right 90 % of the time). The full posterior has the opposite
	// bias, which the weight cap bounds: with one strong agent among weak
	// ones EM trusts the strong one nearly completely (0.99 for 0.90).
	logs := make([]float64, 0, len(keys))
	logRight, logWrong := make([]float64, len(keys)), make([]float64, len(keys))
	posterior := func(ps *post) {
		if len(ps.values) == 0 {
			return
		}
		logs = logs[:0]
		for j := range ps.values {
			l := 0.0
			for k, a := range ps.answer {
				switch {
				case a == j:
					l += logRight[k]
				case a >= 0:
					l += logWrong[k]
				}
			}
			logs = append(logs, l)
		}
		top := slices.Max(logs)
		sum := 0.0
		for j := range logs {
			ps.prob[j] = math.Exp(logs[j] - top)
			sum += ps.prob[j]
		}
		for j := range ps.prob {
			ps.prob[j] /= sum
		}
	}
	refresh := func() {
		for k := range keys {
			logRight[k], logWrong[k] = math.Log(p[k]), math.Log((1-p[k])/reliabilitySpread)
		}
		for i := range posts {
			posterior(&posts[i])
		}
	}
	// Items where every answer differs stay in the fit although they only
	// say that at most one agent was right, and so feed back whoever EM
	// rates highest: they are also what shows that a weak agent is weak
	// (nobody shares its answers). Left out, a 0.3 agent among a 0.9 and
	// two weaker ones was rated right 72 % of the time after 1,000 items
	// and pairs of weak agents outvoted the strong one (docs/BENCHMARKS.md,
	// "One strong member among weak ones").
	for range 50 {
		refresh()
		moved := 0.0
		for k := range keys {
			// Beta(2,2)-smoothed: a handful of items cannot make an agent
			// certain or worthless.
			mass, n := 1.0, 2.0
			for i := range posts {
				if a := posts[i].answer[k]; a >= 0 {
					n++
					mass += posts[i].prob[a]
				}
			}
			np := min(max(mass/n, 0.01), 0.99)
			moved = max(moved, math.Abs(np-p[k]))
			p[k] = np
		}
		if moved < 1e-6 {
			break
		}
	}
	refresh()
	out := make([]Reliability, 0, len(keys))
	for k, key := range keys {
		r := Reliability{Key: key, P: p[k], Weight: weightOf(p[k])}
		for i := range posts {
			ps := &posts[i]
			a := ps.answer[k]
			if a < 0 {
				continue
			}
			r.Items++
			for o, b := range ps.answer {
				if o != k && b == a {
					r.Shared++
					break
				}
			}
			best := 0
			for j := range ps.prob {
				if ps.prob[j] > ps.prob[best] {
					best = j
				}
			}
			if best == a {
				r.Agreed++
			}
		}
		if r.Items == 0 {
			r.Weight = 1
		}
		out = append(out, r)
	}
	return out
}

// weightOf is an answer's log-likelihood ratio under the one-coin model.
func weightOf(p float64) float64 {
	return min(max(math.Log(p*reliabilitySpread/(1-p)), minWeight), maxWeight)
}

// sessionWeights is every agent's weight under consensus weighted, in team
// order, with why: the rules' own reason, or that none was given.
func sessionWeights(s *Session) []VoteWeight {
	out := make([]VoteWeight, 0, len(s.Agents))
	for _, a := range s.Agents {
		w := VoteWeight{Agent: a.ID, Weight: 1, Reason: "counts 1: no weight was given for it"}
		for _, given := range s.Rules.Weights {
			if given.Agent == a.ID {
				w = given
			}
		}
		out = append(out, w)
	}
	return out
}

// weightedNote says in words how consensus weighted chose: the winning
// value's weight, who gave it, what the next value had, and, for an early
// stop, that round 0's lead passed SPRTLead.
func weightedNote(s *Session, st *State, how, winner string, stop StopReason) string {
	groups := CountStanding(s, st).Groups
	i := slices.IndexFunc(groups, func(g Group) bool { return slices.Contains(g.Agents, winner) })
	if i < 0 {
		return ""
	}
	win := groups[i]
	second := 0.0
	for _, g := range groups {
		if g.Key != win.Key {
			second = max(second, g.Weight)
		}
	}
	var who []string
	for _, id := range win.Agents {
		who = append(who, fmt.Sprintf("%s %.2f", id, s.Rules.weight(id)))
	}
	value := strings.TrimPrefix(win.Key, "value:")
	if w := st.Agent(win.Winner); w != nil && w.LatestAnswer != nil {
		value = finalvalue.Of(w.LatestAnswer.Content)
	}
	text := fmt.Sprintf("weighted vote: %s has weight %.2f from %d ballots (answers of %s and the votes for them) against %.2f for the next value",
		value, win.Weight, win.Votes, strings.Join(who, ", "), second)
	if how == ChosenConsensus {
		text += dominantNote(s, st, stop)
	}
	if how == ChosenEarlyAgreement {
		text = fmt.Sprintf("stopped after round 0: %s leads by %.2f, past the %.2f that odds of 19 to 1 need, and %d agents hold it (%s); nobody voted",
			value, win.Weight-second, SPRTLead, len(win.Agents), strings.Join(who, ", "))
	}
	return text
}
