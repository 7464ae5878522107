package coordination

import (
	"sync"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A call made on a session's behalf outside its steps (a criteria call)
// joins the session's spend in flight here (liveSpend) as a step does, so
// the steps, the launches (affordable) and other such calls count it; and
// before each of its attempts it reserves the attempt's worst case there,
// under the same lock that reads what the others hold. Two calls checked
// at once then cannot both take the same room: the second sees the
// first's worst case as spent. What the attempt really spent replaces the
// reservation at the next check, and close (deferred by the caller, so it
// runs on an error, a cancel or a panic too) hands the call's spend to
// landed, where the ledger takes it over. The caller lets go as soon as
// the spend is recorded (letGoOnce): held past then, a call or step that
// reads the ledger meanwhile counts the spend twice, once there and once
// as the reservation.

// openHold is a call's place among session s's spend in flight here,
// base being the session's spend as the caller read it (its ledger and
// what an outage keeps from it). Nil for a session without a budget.
func (rs *runs) openHold(s *Session, base spent) *stepSpend {
	r := s.Rules
	if !r.budgeted() {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ls := rs.spends[s.ID]
	if ls == nil {
		ls = &liveSpend{live: map[*stepSpend]spent{}}
		rs.spends[s.ID] = ls
	}
	ls.refs++
	m := &stepSpend{runs: rs, id: s.ID, sess: ls, cost: r.CostBudgetUSD, tokens: r.TokenBudget, base: base, since: ls.landed, reserving: true}
	ls.live[m] = spent{}
	return m
}

// reserve checks an attempt whose worst case is worst after the call's
// attempts so far spent own: fits is told the session's spend — base,
// what landed since, and own — and apart, what every other step or call
// in flight here holds (its spend so far, or its reservation), and says
// why the attempt does not fit, or "". An attempt that fits holds own
// plus worst until the next reserve or close; one that does not holds own
// alone.
func (m *stepSpend) reserve(own, worst spent, fits func(paid, held spent) string) string {
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	paid := m.base.plus(m.sess.landed).plus(spent{-m.since.cost, -m.since.tokens}).plus(own)
	var held spent
	for other, s := range m.sess.live {
		if other != m {
			held = held.plus(s)
		}
	}
	m.prior = own
	if why := fits(paid, held); why != "" {
		m.sess.live[m] = own
		return why
	}
	m.sess.live[m] = own.plus(worst)
	return ""
}

// letGoOnce returns what closes m with the call's usage u (nil: none
// known), the first time it is called: right after the usage is recorded
// and, deferred, on every other way out. Nil-safe, as close is.
func (m *stepSpend) letGoOnce() func(u *providers.Usage) {
	var once sync.Once
	return func(u *providers.Usage) {
		once.Do(func() {
			var spentSoFar providers.Usage
			if u != nil {
				spentSoFar = *u
			}
			m.close(spentSoFar)
		})
	}
}

// holding is what the calls of session id in flight here hold (their
// spend so far, or their reservation): part of runs.spent, which a launch
// counts apart (affordable counts it as spent, and waits on it).
func (rs *runs) holding(id string) spent {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var total spent
	if ls := rs.spends[id]; ls != nil {
		for m, s := range ls.live {
			if m.reserving {
				total = total.plus(s)
			}
		}
	}
	return total
}
