package coordination

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/providers"
)

// spent is money and tokens, unknown costs counted as zero (as the budget
// check in overLimit counts them).
type spent struct {
	cost   float64
	tokens int64
}

func spentOf(u providers.Usage) spent {
	s := spent{tokens: u.Tokens()}
	if u.CostUSD != nil {
		s.cost = *u.CostUSD
	}
	return s
}

func (a spent) plus(b spent) spent { return spent{a.cost + b.cost, a.tokens + b.tokens} }

// ledgerSpend is what a ledger spent: the total (its steps and the
// session's own usage entries: cancelled calls, the final call), how many
// steps, and how many of them had a known cost (the mean a launch counts
// on).
type ledgerSpend struct {
	spent
	steps, costed int
}

// spendOf sums a ledger's spend; Derive keeps it on the state, and the
// budget check at landing (overLimit) reads the same sum.
func spendOf(l *Ledger) ledgerSpend {
	var sp ledgerSpend
	for _, entries := range l.Agents {
		for _, e := range entries {
			sp.spent = sp.plus(spentOf(e.Usage))
			sp.steps++
			if e.Usage.CostUSD != nil {
				sp.costed++
			}
		}
	}
	for _, e := range l.Session {
		if e.Kind == SessionUsage && e.Usage != nil {
			sp.spent = sp.plus(spentOf(*e.Usage))
		}
	}
	return sp
}

// ledgerSpent is what the state's ledger spent (spendOf, kept by Derive).
func ledgerSpent(st *State) ledgerSpend { return st.spend }

// liveSpend is what one session's steps in flight in this process have
// reported spending so far, beside what has landed since the first of them
// started. It is what lets a step that learns its usage turn by turn (a CLI
// agent) stop once the session — the ledger, plus every step in flight —
// is past its cost_budget_usd or token_budget, instead of when it exits:
// a run then ends within one turn of the budget per agent in flight. It
// lives while a step of the session is in flight here (runs.spends).
type liveSpend struct {
	landed spent                // usage that landed since this was made
	live   map[*stepSpend]spent // each step in flight: its usage so far
	refs   int
}

// stepSpend is one step's view of its session's budgets
// (providers.Spend), held in the step's kit.
type stepSpend struct {
	runs   *runs
	id     string // the session
	sess   *liveSpend
	cost   *float64 // the session's budgets
	tokens *int64
	base   spent // the ledger's spend when the step started
	since  spent // sess.landed when the step started
	prior  spent // the step's earlier attempts
}

// openSpend starts a step's view of its session's budgets, or returns nil
// when the session has none.
func (rs *runs) openSpend(s *Session, st *State) *stepSpend {
	r := s.Rules
	if r.CostBudgetUSD == nil && r.TokenBudget == nil {
		return nil
	}
	base := ledgerSpent(st).spent
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ls := rs.spends[s.ID]
	if ls == nil {
		ls = &liveSpend{live: map[*stepSpend]spent{}}
		rs.spends[s.ID] = ls
	}
	ls.refs++
	m := &stepSpend{runs: rs, id: s.ID, sess: ls, cost: r.CostBudgetUSD, tokens: r.TokenBudget, base: base, since: ls.landed}
	ls.live[m] = spent{}
	return m
}

// Used implements providers.Spend: the attempt's usage so far, on top of
// the step's earlier attempts, beside every other step in flight.
func (m *stepSpend) Used(u providers.Usage) string {
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	m.sess.live[m] = m.prior.plus(spentOf(u))
	total := m.base.plus(m.sess.landed).plus(spent{-m.since.cost, -m.since.tokens})
	for _, s := range m.sess.live {
		total = total.plus(s)
	}
	switch {
	case m.cost != nil && total.cost >= *m.cost:
		return fmt.Sprintf("would take the session past its cost_budget_usd of $%.2f ($%.4f spent with the steps in flight)", *m.cost, total.cost)
	case m.tokens != nil && total.tokens >= *m.tokens:
		return fmt.Sprintf("would take the session past its token_budget of %d (%d tokens spent with the steps in flight)", *m.tokens, total.tokens)
	}
	return ""
}

// attempted adds a finished attempt's usage to the step's.
func (m *stepSpend) attempted(u providers.Usage) {
	if m == nil {
		return
	}
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	m.prior = m.prior.plus(spentOf(u))
	m.sess.live[m] = m.prior
}

// close ends the step's view once its usage is in the store (its entry, or
// the session's usage entry of a cancelled call): from now on the other
// steps count it as landed.
func (m *stepSpend) close(u providers.Usage) {
	if m == nil {
		return
	}
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	delete(m.sess.live, m)
	m.sess.landed = m.sess.landed.plus(spentOf(u))
	if m.sess.refs--; m.sess.refs == 0 {
		delete(m.runs.spends, m.id)
	}
}

// spent is what the session's steps in flight here have reported
// spending so far.
func (rs *runs) spent(id string) spent {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var total spent
	if ls := rs.spends[id]; ls != nil {
		for _, s := range ls.live {
			total = total.plus(s)
		}
	}
	return total
}
