package coordination

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestTheFirstWaveLaunchesOnlyWhatItsWorstCaseAffords: before any step has
// landed, a launch counts every step in flight and the new one at the worst
// case of a first step, so a budget of one and a half steps' worst case
// lets one step out and not a second (Create refuses less than a round; a
// session resumed under other rules can still meet this).
func TestTheFirstWaveLaunchesOnlyWhatItsWorstCaseAffords(t *testing.T) {
	m := "sim:price_in=10:price_out=40"
	s := &Session{Task: "What is 17 * 23?", Agents: []Agent{{ID: "agent_a", Model: m}, {ID: "agent_b", Model: m}}}
	var err error
	if s.Rules, err = (Rules{}).Normalize(); err != nil {
		t.Fatal(err)
	}
	s.Aliases = assignAliases(s.AgentIDs(), 1, s.Rules.Aliases)
	w := worstStep(s)
	if !w.priced || w.cost <= 0 || w.tokens <= DefaultEstimateOutputTokens {
		t.Fatalf("worst step %+v", w)
	}
	st := Derive(s, &Ledger{Agents: map[string][]Entry{}}, nil)
	cost, tokens := w.cost*1.5, int64(float64(w.tokens)*1.5)
	for name, rules := range map[string]Rules{"cost": {CostBudgetUSD: &cost}, "tokens": {TokenBudget: &tokens}} {
		s.Rules.CostBudgetUSD, s.Rules.TokenBudget = rules.CostBudgetUSD, rules.TokenBudget
		if !affordable(s, st, 0, spent{}, spent{}, func() stepWorst { return worstStep(s) }) {
			t.Errorf("%s: the first step of the wave must be affordable", name)
		}
		if affordable(s, st, 1, spent{}, spent{}, func() stepWorst { return worstStep(s) }) {
			t.Errorf("%s: a second step in the first wave passes the budget in the worst case, yet it was launched", name)
		}
	}
}

// TestLaunchesCountTheSessionsOwnSpend: usage recorded outside any step (a
// cancelled call, a final call) counts against the budget at launch as it
// does at landing (overLimit): one sum, spendOf.
func TestLaunchesCountTheSessionsOwnSpend(t *testing.T) {
	s := pairWithCostBudget(t, 1.0)
	spentOutside := 1.0
	l := &Ledger{Agents: map[string][]Entry{}, Session: []SessionEntry{{Seq: 1, Kind: SessionUsage, Usage: &providers.Usage{Input: 10, CostUSD: &spentOutside}}}}
	st := Derive(s, l, nil)
	if affordable(s, st, 0, spent{}, spent{}, func() stepWorst { return worstStep(s) }) {
		t.Fatal("a session whose own usage entries spent its budget launched a step")
	}
	if (&Service{}).overLimit(s, l) != StopBudget {
		t.Fatal("the landing check does not count the session's own usage either")
	}
}

// TestLaunchesCountTheSpendHeldForTheSession: spend an outage kept from
// the ledger (held here, spendspool.go) is spent: a launch the ledger
// alone affords is refused when the held spend leaves no room for it.
func TestLaunchesCountTheSpendHeldForTheSession(t *testing.T) {
	s := pairWithCostBudget(t, 1.0)
	step := 0.1
	var entries []Entry
	for i := range 5 {
		entries = append(entries, Entry{Agent: "agent_a", Step: i + 1, Kind: KindAnswer, Usage: providers.Usage{Input: 10, CostUSD: &step}})
	}
	st := Derive(s, &Ledger{Agents: map[string][]Entry{"agent_a": entries}}, nil)
	worst := func() stepWorst { return worstStep(s) }
	if !affordable(s, st, 0, spent{}, spent{}, worst) {
		t.Fatal("$0.50 spent at $0.10 a step of a $1 budget: the next step must be affordable")
	}
	if affordable(s, st, 0, spent{}, spent{cost: 0.45}, worst) {
		t.Error("with $0.45 held for the session, a $0.10 step passes its $1 budget, yet it was launched")
	}
}

// pairWithCostBudget is a session of two sims whose rules are the defaults
// and a cost budget.
func pairWithCostBudget(t *testing.T, budget float64) *Session {
	t.Helper()
	s := &Session{Task: "t", Agents: []Agent{{ID: "agent_a", Model: "sim"}, {ID: "agent_b", Model: "sim"}}}
	var err error
	if s.Rules, err = (Rules{}).Normalize(); err != nil {
		t.Fatal(err)
	}
	s.Rules.CostBudgetUSD = &budget
	return s
}
