package coordination_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

// chaotic is a provider that answers, votes (sometimes for a label it was
// not shown) or fails at random, from its own seed: the random teams of the
// result's invariants.
type chaotic struct {
	mu               sync.Mutex
	r                *rand.Rand
	fail, voteChance float64
}

func (c *chaotic) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := 0.001
	u := providers.Usage{Input: 20, Output: 10, CostUSD: &cost}
	if c.r.Float64() < c.fail {
		return providers.Action{}, u, errors.New("upstream said no")
	}
	if len(req.VoteEnum) > 0 && coordtest.HasTool(req, providers.ToolVote) && (!coordtest.HasTool(req, providers.ToolNewAnswer) || c.r.Float64() < c.voteChance) {
		target := req.VoteEnum[c.r.IntN(len(req.VoteEnum))]
		if c.r.IntN(4) == 0 {
			target += fmt.Sprintf(".%d", 1+c.r.IntN(3)) // maybe what it saw, maybe not
		}
		return coordtest.Act(providers.VoteCall(target, "looks right")), u, nil
	}
	return coordtest.Act(providers.NewAnswerCall(fmt.Sprintf("Answer: %d", c.r.IntN(4)))), u, nil
}

// TestResultNeverContradictsItself is item 3's property over random teams of
// failing, answering and voting agents under every rule: when consensus is
// reached its leader is the winner; how_chosen fits stop_reason; steps counts
// every landed entry; every agent's latest landed answer is in answers.
func TestResultNeverContradictsItself(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "agents")
		provs := map[string]providers.Provider{}
		var agents []coordination.Agent
		for i := range n {
			spec := fmt.Sprintf("sim:seed=%d", 500+i)
			sp, _ := providers.ParseSpec(spec)
			provs[sp.String()] = &chaotic{
				r:          rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), uint64(i))),
				fail:       rapid.SampledFrom([]float64{0, 0, 0.2, 0.5, 0.9}).Draw(rt, "fail"),
				voteChance: rapid.Float64Range(0, 1).Draw(rt, "vote"),
			}
			agents = append(agents, coordination.Agent{ID: fmt.Sprintf("agent_%c", 'a'+i), Model: sp.String()})
		}
		rules := coordination.Rules{
			Consensus:          rapid.SampledFrom([]coordination.ConsensusRule{"majority", "plurality", "unanimous", "weighted"}).Draw(rt, "consensus"),
			MaxRounds:          rapid.IntRange(1, 6).Draw(rt, "max_rounds"),
			MaxAnswersPerAgent: rapid.IntRange(1, 3).Draw(rt, "max_answers"),
			MaxAgentFailures:   rapid.IntRange(1, 3).Draw(rt, "max_failures"),
		}
		if rapid.Bool().Draw(rt, "short") {
			rules.AnswerFormat = coordination.FormatShort
			rules.EarlyStop = rapid.Bool().Draw(rt, "early")
		}
		if rules.Consensus == coordination.RuleWeighted {
			rules.AnswerFormat = coordination.FormatShort
			for _, a := range agents {
				if rapid.Bool().Draw(rt, "weighted_"+a.ID) {
					rules.Weights = append(rules.Weights, coordination.VoteWeight{Agent: a.ID, Weight: float64(rapid.IntRange(1, 40).Draw(rt, "weight_"+a.ID)) / 10})
				}
			}
			rules.DominantStop = rapid.Bool().Draw(rt, "dominant_stop")
		}
		if rapid.Bool().Draw(rt, "alphabetical") {
			rules.Aliases, rules.RotateOwnLast, rules.BlindFirst = coordination.AliasesAlphabetical, new(bool), new(bool)
		}
		if rapid.Bool().Draw(rt, "budget") {
			b := float64(rapid.IntRange(1, 12).Draw(rt, "budget_steps")) * 0.001
			rules.CostBudgetUSD = &b
		}
		store := memstore.New()
		h := &coordtest.Harness{T: t, Store: store, Providers: provs}
		h.Service = coordination.NewService(store, coordination.Options{Open: h.Open, Parallel: rapid.IntRange(1, 4).Draw(rt, "parallel")})
		seed := rapid.Int64Range(-(1<<53-1), 1<<53-1).Draw(rt, "session_seed")
		s, err := h.Service.Create(context.Background(), coordination.TeamSpec{Task: "What is 1+2?", Agents: agents, Rules: rules, Seed: &seed})
		if err != nil {
			rt.Fatal(err)
		}
		res, err := h.Service.Run(context.Background(), s.ID, nil)
		if err != nil {
			rt.Fatal(err)
		}
		if problem := contradiction(res, h.Ledger(s.ID), rules.AnswerFormat == coordination.FormatShort); problem != "" {
			rt.Fatalf("%s\nresult: %s", problem, coordtest.JSON(res))
		}
	})
}

// howFits is which stop reasons each how_chosen can end a session with.
var howFits = map[string][]coordination.StopReason{
	coordination.ChosenConsensus:      {coordination.StopConsensus, coordination.StopTimeout, coordination.StopBudget, coordination.StopFinalized},
	coordination.ChosenEarlyAgreement: {coordination.StopEarlyAgreement},
	coordination.ChosenSingleAgent:    {coordination.StopSingleAgent},
	coordination.ChosenForcedStanding: {coordination.StopSplitVote, coordination.StopMaxRounds, coordination.StopTimeout, coordination.StopBudget, coordination.StopFinalized},
	coordination.ChosenForcedCurrent:  {coordination.StopSplitVote, coordination.StopMaxRounds, coordination.StopTimeout, coordination.StopBudget, coordination.StopFinalized},
	coordination.ChosenForcedFirst:    {coordination.StopSplitVote, coordination.StopMaxRounds, coordination.StopTimeout, coordination.StopBudget, coordination.StopFinalized, coordination.StopAgentsFailed},
}

// contradiction names the first way a finished result contradicts itself
// or its ledger, or returns ""; short is answer_format short (votes pool by
// value).
func contradiction(res *coordination.TeamResult, l *coordination.Ledger, short bool) string {
	if res.Status != coordination.StatusFinished && res.Status != coordination.StatusFailed {
		return "the session did not end: " + res.Status
	}
	stop := coordination.Deref(res.StopReason)
	if res.Winner == nil {
		if res.Status != coordination.StatusFailed || res.HowChosen != nil || res.Consensus.Reached {
			return "a result without a winner must be a failed session that reached nothing"
		}
	} else {
		how := ""
		if res.HowChosen != nil {
			how = *res.HowChosen
		}
		fits := false
		for _, s := range howFits[how] {
			fits = fits || s == stop
		}
		if !fits {
			return fmt.Sprintf("how_chosen %q does not fit stop_reason %q", how, stop)
		}
		if res.Consensus.Reached && (res.Consensus.Leader == nil || *res.Consensus.Leader != res.Winner.Label) {
			return fmt.Sprintf("consensus reached with leader %v beside winner %s", res.Consensus.Leader, res.Winner.Label)
		}
		if (how == coordination.ChosenForcedFirst) != (res.HowChosenNote == coordination.ForcedFirstNote) {
			return "how_chosen_note must say when the winner was picked by arrival (and only then)"
		}
		forcedWinner := how == coordination.ChosenForcedFirst || how == coordination.ChosenForcedStanding || how == coordination.ChosenForcedCurrent
		if forcedWinner && res.NotAgreed == "" || (how == coordination.ChosenConsensus || how == coordination.ChosenEarlyAgreement) && res.NotAgreed != "" {
			return fmt.Sprintf("not_agreed %q beside how_chosen %s: a forced winner must say it was not agreed, an agreed one must not", res.NotAgreed, how)
		}
		if stop == coordination.StopConsensus {
			if problem := tallyFallsShort(res, short); problem != "" {
				return problem
			}
		}
	}
	entries := 0
	for id, es := range l.Agents {
		entries += len(es)
		latest := ""
		for _, e := range es {
			if e.Kind == coordination.KindAnswer {
				latest = e.Label
			}
		}
		if latest == "" {
			continue
		}
		found := false
		for _, a := range res.Answers {
			found = found || (a.AgentID == id && a.Label == latest)
		}
		if !found {
			return fmt.Sprintf("%s's latest answer %s is not in answers", id, latest)
		}
	}
	if res.Steps != entries {
		return fmt.Sprintf("steps %d, but %d entries landed", res.Steps, entries)
	}
	return ""
}

// tallyFallsShort says how a consensus result's standing votes fail its rule,
// or returns "". The denominator (agents that can still vote) is not in the
// result, but it is at least the votes cast, so a majority of it is a
// majority of them: a 1-1 split is never consensus. Under answer_format
// short, votes for answers with the same value count together.
func tallyFallsShort(res *coordination.TeamResult, short bool) string {
	c := res.Consensus
	if !c.Reached || c.Leader == nil {
		return "stop_reason consensus, but consensus was not reached"
	}
	if c.Rule == coordination.RuleWeighted {
		// The weighted tally is already pooled by value: the leader's
		// weight must be the one largest.
		lead := c.WeightedTally[*c.Leader]
		for label, w := range c.WeightedTally {
			if label != *c.Leader && w >= lead {
				return fmt.Sprintf("weighted consensus for %s with weighted tally %v: another value weighs as much", *c.Leader, c.WeightedTally)
			}
		}
		if lead <= 0 {
			return fmt.Sprintf("weighted consensus for %s with weighted tally %v: the leader has no weight", *c.Leader, c.WeightedTally)
		}
		return ""
	}
	pool := func(label string) string { return label }
	if short {
		values := map[string]string{}
		for _, a := range res.Answers {
			values[a.Label] = "value " + finalvalue.Of(a.Content)
		}
		pool = func(label string) string { return cmp.Or(values[label], label) }
	}
	votes := map[string]int{}
	cast := 0
	for label, n := range c.Tally {
		votes[pool(label)] += n
		cast += n
	}
	lead, rival := votes[pool(*c.Leader)], 0
	for key, n := range votes {
		if key != pool(*c.Leader) {
			rival = max(rival, n)
		}
	}
	switch {
	case lead == 0 || lead <= rival:
		return fmt.Sprintf("consensus for %s with tally %v: the leader must have the most standing votes", *c.Leader, c.Tally)
	case c.Rule == "majority" && 2*lead <= cast:
		return fmt.Sprintf("majority consensus for %s with tally %v: not more than half of the votes cast", *c.Leader, c.Tally)
	case c.Rule == "unanimous" && lead != cast:
		return fmt.Sprintf("unanimous consensus for %s with tally %v: another answer has votes", *c.Leader, c.Tally)
	}
	return ""
}
