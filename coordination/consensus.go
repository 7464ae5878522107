package coordination

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// Tally counts the standing votes of non-dropped agents.
type Tally struct {
	ByAgent map[string]int // votes per target agent id
	ByLabel map[string]int // votes per target's latest label
	Voters  int            // standing votes counted
	// Live is the denominator: the non-dropped agents that hold a standing
	// vote or can still step (a capped agent that never voted cannot vote,
	// and counting it could make unanimous impossible).
	Live int
	// Groups are the units the rule is applied to: one per target agent, or
	// under short answers one per final value (votes pooled).
	Groups []Group
}

// Group is one candidate in a tally: an agent, or a pool of agents whose
// latest answers share a final value.
type Group struct {
	Key    string
	Agents []string // members, lowest alias number first
	Votes  int
	Winner string // the member that wins if the group wins
	// Weight is the group's summed ballot weight under consensus weighted
	// (each member's latest answer and each standing vote for it, at its
	// agent's weight); 0 under the other rules.
	Weight float64
}

// CountStanding tallies the standing votes of non-dropped agents.
func CountStanding(s *Session, st *State) Tally {
	t := Tally{ByAgent: map[string]int{}, ByLabel: map[string]int{}}
	for _, a := range st.Agents {
		if a.Dropped || (a.Capped && a.StandingVote == nil) {
			continue
		}
		t.Live++
		if v := a.StandingVote; v != nil {
			t.Voters++
			t.ByAgent[v.Target]++
			if target := st.Agent(v.Target); target != nil && target.LatestAnswer != nil {
				t.ByLabel[target.LatestAnswer.Label]++
			}
		}
	}
	if s.Rules.Consensus == RuleWeighted {
		t.Groups = weightedGroups(s, st)
	} else {
		t.Groups = groupVotes(s, st, t.ByAgent)
	}
	return t
}

// weightedGroups pools the ballots of consensus weighted by final value:
// every non-dropped agent's latest answer, and its standing vote, count its
// weight for their value. An agent's first answer is its independent view
// and its vote what it thinks after reading the others: counting both keeps
// a strong agent that a weak majority talked round from losing its whole
// weight (the anti-conformity of a trajectory score). A group's winner is
// its heaviest member, then the lowest alias number.
func weightedGroups(s *Session, st *State) []Group {
	var groups []Group
	index := map[string]int{}
	add := func(holder *AgentState, w float64) {
		key := "value:" + finalvalue.Of(holder.LatestAnswer.Content)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, Group{Key: key, Winner: holder.ID})
		}
		g := &groups[i]
		if !slices.Contains(g.Agents, holder.ID) {
			g.Agents = append(g.Agents, holder.ID)
			if s.Rules.weight(holder.ID) > s.Rules.weight(g.Winner) {
				g.Winner = holder.ID
			}
		}
		g.Votes++
		g.Weight += w
	}
	for _, a := range byAnonOrder(st.Agents) {
		if a.Dropped || a.LatestAnswer == nil {
			continue
		}
		add(a, s.Rules.weight(a.ID))
	}
	for _, a := range byAnonOrder(st.Agents) {
		if a.Dropped || a.StandingVote == nil {
			continue
		}
		if target := st.Agent(a.StandingVote.Target); target != nil && target.LatestAnswer != nil {
			add(target, s.Rules.weight(a.ID))
		}
	}
	return groups
}

// weightTie is how close two weights must be to tie: sums of the same
// weights in another order differ in the last bits.
const weightTie = 1e-9

// topGroups returns the groups that lead under the rule: the most weight
// under consensus weighted, the most votes under the others.
func topGroups(rule ConsensusRule, groups []Group) []Group {
	if rule != RuleWeighted {
		return leaders(groups)
	}
	best := math.Inf(-1)
	var out []Group
	for _, g := range groups {
		switch {
		case g.Weight > best+weightTie:
			best, out = g.Weight, []Group{g}
		case g.Weight >= best-weightTie:
			out = append(out, g)
		}
	}
	return out
}

// groupVotes turns per-agent counts into the groups a rule compares. Under
// short answers, agents whose latest answers have the same final value form
// one pool; its winner is its most-voted member, then the lowest alias
// number.
func groupVotes(s *Session, st *State, byAgent map[string]int) []Group {
	var groups []Group
	index := map[string]int{}
	for _, a := range byAnonOrder(st.Agents) {
		n := byAgent[a.ID]
		if n == 0 {
			continue
		}
		key := a.ID
		if s.Rules.short() && a.LatestAnswer != nil {
			key = "value:" + finalvalue.Of(a.LatestAnswer.Content)
		}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, Group{Key: key, Winner: a.ID})
		}
		g := &groups[i]
		g.Agents = append(g.Agents, a.ID)
		g.Votes += n
		if n > byAgent[g.Winner] {
			g.Winner = a.ID
		}
	}
	return groups
}

// leaders returns the groups with the most votes.
func leaders(groups []Group) []Group {
	best := 0
	var out []Group
	for _, g := range groups {
		switch {
		case g.Votes > best:
			best, out = g.Votes, []Group{g}
		case g.Votes == best && best > 0:
			out = append(out, g)
		}
	}
	return out
}

// RuleMet applies the session's consensus rule to a tally and returns the
// winning agent. A tie never meets a rule.
func RuleMet(rule ConsensusRule, t Tally) (winner string, ok bool) {
	top := topGroups(rule, t.Groups)
	if len(top) != 1 {
		return "", false
	}
	g := top[0]
	switch rule {
	case RuleMajority:
		ok = 2*g.Votes > t.Live
	case RulePlurality, RuleWeighted:
		ok = true
	case RuleUnanimous:
		ok = g.Votes == t.Live && t.Live > 0
	}
	if !ok {
		return "", false
	}
	return g.Winner, true
}

// forced picks a winner when no rule is met, in the three-level order of
// docs/DESIGN.md, "Round 0, the denominator, deciding": most standing votes, else most current votes, else the latest answer
// of the agent that answered first. Ties are drawn from the seed.
func forced(s *Session, st *State, draw int) (winner, how string, tie bool) {
	pick := func(top []Group) (string, bool) {
		if len(top) == 1 {
			return top[0].Winner, false
		}
		r := rand.New(rand.NewPCG(uint64(s.Seed), 0x746965+uint64(draw))) // "tie"
		return top[r.IntN(len(top))].Winner, true
	}
	if top := topGroups(s.Rules.Consensus, CountStanding(s, st).Groups); len(top) > 0 {
		w, tie := pick(top)
		return w, ChosenForcedStanding, tie
	}
	// Current votes: each live agent's latest vote, if the label it voted for
	// is still the target's current label.
	current := map[string]int{}
	for _, a := range st.Agents {
		if a.Dropped || a.LatestVote == nil {
			continue
		}
		v := a.LatestVote
		if t := st.Agent(v.Target); t != nil && t.LatestAnswer != nil && t.LatestAnswer.Label == v.TargetLabel {
			current[v.Target]++
		}
	}
	if top := leaders(groupVotes(s, st, current)); len(top) > 0 {
		w, tie := pick(top)
		return w, ChosenForcedCurrent, tie
	}
	if first := firstAnswerer(st); first != nil {
		return first.ID, ChosenForcedFirst, false
	}
	return "", "", false
}

// firstAnswerer is the agent whose first answer landed earliest (ties: the
// lowest alias number).
func firstAnswerer(st *State) *AgentState {
	var with []*AgentState
	for _, a := range st.Agents {
		if a.LatestAnswer != nil {
			with = append(with, a)
		}
	}
	sort.SliceStable(with, func(i, j int) bool {
		if !with[i].FirstAnswerAt.Equal(with[j].FirstAnswerAt) {
			return with[i].FirstAnswerAt.Before(with[j].FirstAnswerAt)
		}
		return with[i].Alias < with[j].Alias
	})
	if len(with) == 0 {
		return nil
	}
	return with[0]
}
