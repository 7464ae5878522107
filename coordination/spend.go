package coordination

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

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
	// reserving marks a call's hold (spendhold.go): what it holds is a
	// reservation, not a step's spend, so a launch counts it as spent
	// (runs.holding) where it counts a step by its expected cost.
	reserving bool
	// floor is what a call's hold reserved at its last check (its spend
	// so far and its attempt's worst case): its reports of what it spent
	// (Used) never hold less, so the room it reserved stays its own.
	floor spent
	// holds is the store that shares a call's hold with the other
	// replicas, under holdKey until holdTTL from each check (nil: none).
	// holdMu orders the writes of the hold (a check's, a raise's, the
	// let-go), so a raise sent before a check never lands after it, and
	// none lands after the record of the call's spend or the let-go
	// (holdGone).
	holds    SpendHoldStore
	holdKey  string
	holdTTL  time.Duration
	holdMu   sync.Mutex
	holdGone bool

	// shared is the step's lock when its store shares a step's spend with
	// the other replicas (SpendSharingStepLock), else nil; ctx is the
	// step's call's (sharing ends with it), log the service's.
	shared SpendSharingStepLock
	ctx    context.Context
	log    zerolog.Logger
	// Sharing runs beside the step's reports, never in their way (a CLI
	// reports as its stream goes, holding its own lock): a report leaves
	// its spend as pending and reads others, the session's spend less this
	// step's as the last share read it; one goroutine at a time (sharing)
	// writes the newest pending. After a share fails the step counts its
	// own process alone until quietUntil. A call's hold is raised the same
	// way (raiseHold), its spend past its reservation pending.
	shareMu    sync.Mutex
	pending    *spent
	sharing    bool
	others     *spent
	quietUntil time.Time
}

// Shared spend's limits: a share waits at most sharedSpendWait, and after
// one fails the step counts its own process alone for sharedSpendRest, so
// an unreachable database costs one failed share every few seconds.
const (
	sharedSpendWait = time.Second
	sharedSpendRest = 5 * time.Second
)

// tokensLeft is what a step or the final call may spend of the session's
// token_budget (Request.TokenBudget), at least 1; 0 when it has none.
func tokensLeft(s *Session, st *State) int64 {
	if b := s.Rules.TokenBudget; b != nil {
		return max(*b-ledgerSpent(st).tokens, 1)
	}
	return 0
}

// openSpend starts a step's view of its session's budgets. lock is the
// step's (nil for the final call, which has none): a store that shares
// spend across replicas keeps it there. A session without a budget gets
// one only where its lock shares spend: then the step's spend so far is on
// its lock's row, so a replica that dies mid-step leaves it for the
// agent's next step to record (recordTakenOver), and the session's cost
// stays true; it refuses nothing (Used has no budget to say is spent).
// Without either it returns nil, and a step reports nothing.
func (rs *runs) openSpend(ctx context.Context, s *Session, st *State, lock StepLock, log zerolog.Logger) *stepSpend {
	r := s.Rules
	shared, _ := lock.(SpendSharingStepLock)
	if !r.budgeted() && shared == nil {
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
	m := &stepSpend{runs: rs, id: s.ID, sess: ls, cost: r.CostBudgetUSD, tokens: r.TokenBudget, base: base, since: ls.landed, shared: shared, ctx: ctx, log: log}
	ls.live[m] = spent{}
	return m
}

// key is the key the step's spend is shared under among replicas
// (SpendSharingStepLock.SpendKey), "" when it is not shared.
func (m *stepSpend) key() string {
	if m == nil || m.shared == nil {
		return ""
	}
	return m.shared.SpendKey()
}

// Used implements providers.Spend: the attempt's usage so far, on top of
// the step's earlier attempts, beside every other step in flight here and,
// where the store shares them, on every other replica.
func (m *stepSpend) Used(u providers.Usage) string {
	m.runs.mu.Lock()
	mine := m.prior.plus(spentOf(u))
	floor := m.floor
	m.sess.live[m] = spent{max(mine.cost, floor.cost), max(mine.tokens, floor.tokens)}
	total := m.base.plus(m.sess.landed).plus(spent{-m.since.cost, -m.since.tokens})
	for _, s := range m.sess.live {
		total = total.plus(s)
	}
	m.runs.mu.Unlock()
	// The shared sum holds everything the local one does (the ledger read
	// now, every step in flight as last written); the larger of the two
	// stands, so a step landing here between the two reads is never
	// missed.
	if all, ok := m.shareSpend(mine); ok {
		total = spent{max(total.cost, all.cost), max(total.tokens, all.tokens)}
	}
	if all, ok := m.raiseHold(mine, floor); ok {
		total = spent{max(total.cost, all.cost), max(total.tokens, all.tokens)}
	}
	if budget, spend := pastBudget(m.cost, m.tokens, total); budget != "" {
		return fmt.Sprintf("would take the session past its %s (%s spent with the steps in flight)", budget, spend)
	}
	return ""
}

// pastBudget names the budget total is at or past ("cost_budget_usd of
// $1.00") and what total spent of it ("$1.0200"), or "" while there is
// room or the session has no budget. Every check in flight counts the same
// way: at the budget is past it, an unknown cost is zero.
func pastBudget(cost *float64, tokens *int64, total spent) (budget, spend string) {
	switch {
	case cost != nil && total.cost >= *cost:
		return fmt.Sprintf("cost_budget_usd of $%.2f", *cost), fmt.Sprintf("$%.4f", total.cost)
	case tokens != nil && total.tokens >= *tokens:
		return fmt.Sprintf("token_budget of %d", *tokens), fmt.Sprintf("%d tokens", total.tokens)
	}
	return "", ""
}

// shareSpend leaves the step's spend to be written where the other
// replicas read it, and returns the session's as known now (the last
// share's others, plus mine), or false when the store shares none, no
// share has answered yet, or the last failed.
func (m *stepSpend) shareSpend(mine spent) (spent, bool) {
	if m.shared == nil {
		return spent{}, false
	}
	return m.queueNewest(mine, m.shareNewest)
}

// queueNewest leaves v as the newest spend to write, starts write on a
// goroutine of its own unless one is writing already (it takes the newest
// with takePending), and returns the session's spend as known now (the
// last write's others, plus v), or false while quiet after a failed write
// or before any write answered. A step's shared spend and a call's raised
// hold are written so.
func (m *stepSpend) queueNewest(v spent, write func()) (spent, bool) {
	m.shareMu.Lock()
	defer m.shareMu.Unlock()
	if time.Now().Before(m.quietUntil) {
		return spent{}, false
	}
	m.pending = &v
	if !m.sharing {
		m.sharing = true
		go write()
	}
	if m.others == nil {
		return spent{}, false
	}
	return m.others.plus(v), true
}

// takePending is the newest spend left to write, or nil when there is
// none or the call has ended: then the writer is done (sharing false).
func (m *stepSpend) takePending() *spent {
	m.shareMu.Lock()
	defer m.shareMu.Unlock()
	p := m.pending
	m.pending = nil
	if p == nil || m.ctx.Err() != nil {
		m.sharing = false
		return nil
	}
	return p
}

// shareNewest writes the newest pending spend and reads the session's,
// until nothing is pending, the step's call has ended, or a share fails
// (logged; the step counts this process alone for sharedSpendRest).
func (m *stepSpend) shareNewest() {
	for {
		p := m.takePending()
		if p == nil {
			return
		}
		ctx, cancel := context.WithTimeout(m.ctx, sharedSpendWait)
		cost, tokens, err := m.shared.ShareSpend(ctx, p.cost, p.tokens)
		cancel()
		m.shareMu.Lock()
		if err != nil {
			m.others, m.pending, m.sharing = nil, nil, false
			if m.ctx.Err() == nil {
				m.quietUntil = time.Now().Add(sharedSpendRest)
			}
			m.shareMu.Unlock()
			if m.ctx.Err() == nil {
				what := "its budget check counts this replica's steps alone for a few seconds"
				if m.cost == nil && m.tokens == nil {
					what = "a replica that took its step over would not know what it spent so far"
				}
				m.log.Warn().Err(err).Str("session", m.id).Msg("could not share a step's spend with the other replicas; " + what)
			}
			return
		}
		m.others = &spent{cost - p.cost, tokens - p.tokens}
		m.shareMu.Unlock()
	}
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
