package coordination

import (
	"cmp"
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/rs/zerolog"

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
//
// On a store whose replicas share holds (SpendHoldStore: PostgreSQL) an
// attempt that fits here holds its reservation there too, and is checked
// again against what every replica spent and holds: a call or a step on
// another replica counts it, and it counts theirs. The hold there goes
// with the write that records the call's spend (heldAs), when the call
// lets go here, or at its expiry (holdTTL) if this process dies first.

// holdGrace is how long a shared hold outlives its call's deadline, the
// session's step_timeout_seconds (or the default's): a holder that dies
// leaves it counting that long at most.
const holdGrace = time.Minute

// openHold is a call's place among session s's spend in flight here,
// base being the session's spend as the caller read it (its ledger and
// what an outage keeps from it). Nil for a session without a budget.
// A store that shares holds (holds) keeps each attempt's reservation
// where the other replicas count it, under a key of this call's own; ctx
// is the call's, log the service's.
func (rs *runs) openHold(ctx context.Context, s *Session, base spent, holds SpendHoldStore, log zerolog.Logger) *stepSpend {
	r := s.Rules
	if !r.budgeted() {
		return nil
	}
	var key string
	var ttl time.Duration
	if holds != nil {
		key = "hold:" + rand.Text()
		ttl = seconds(cmp.Or(r.StepTimeoutSeconds, DefaultRules().StepTimeoutSeconds)) + holdGrace
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ls := rs.spends[s.ID]
	if ls == nil {
		ls = &liveSpend{live: map[*stepSpend]spent{}}
		rs.spends[s.ID] = ls
	}
	ls.refs++
	m := &stepSpend{runs: rs, id: s.ID, sess: ls, cost: r.CostBudgetUSD, tokens: r.TokenBudget, base: base, since: ls.landed, reserving: true,
		holds: holds, holdKey: key, holdTTL: ttl, ctx: ctx, log: log}
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
		m.sess.live[m], m.floor = own, own
		return why
	}
	m.sess.live[m], m.floor = own.plus(worst), own.plus(worst)
	return ""
}

// reserveShared is reserve's check on every replica, once reserve let the
// attempt go here: the hold (own plus worst) is written where the other
// replicas count it, and fits is told what they all spent, plus own, and
// apart what the other calls hold. An attempt that does not fit holds own
// alone, here and there. A store that cannot be reached leaves the check
// to this process (logged), as a step's share does.
func (m *stepSpend) reserveShared(own, worst spent, fits func(paid, held spent) string) string {
	if m == nil || m.holds == nil {
		return ""
	}
	hs, ok := m.holdShared(own.plus(worst))
	if !ok {
		return ""
	}
	why := fits(spent{hs.SpentCost, hs.SpentTokens}.plus(own), spent{hs.HeldCost, hs.HeldTokens})
	if why != "" {
		m.runs.mu.Lock()
		if _, in := m.sess.live[m]; in {
			m.sess.live[m], m.floor = own, own
		}
		m.runs.mu.Unlock()
		m.holdShared(own)
	}
	return why
}

// holdShared writes total as the call's hold on every replica and reads
// the session's spend there; false when the store did not answer, or the
// call has let its hold go.
func (m *stepSpend) holdShared(total spent) (HeldSpend, bool) {
	m.holdMu.Lock()
	defer m.holdMu.Unlock()
	return m.holdSharedLocked(total)
}

// holdSharedLocked is holdShared for a caller that holds m.holdMu.
func (m *stepSpend) holdSharedLocked(total spent) (HeldSpend, bool) {
	if m.holdGone {
		return HeldSpend{}, false
	}
	ctx, cancel := context.WithTimeout(m.ctx, sharedSpendWait)
	defer cancel()
	hs, err := m.holds.HoldSpend(ctx, m.id, m.holdKey, total.cost, total.tokens, m.holdTTL)
	if err != nil {
		if m.ctx.Err() == nil {
			m.log.Warn().Err(err).Str("session", m.id).Msg("could not share a criteria call's hold on the session's budget with the other replicas; its check counts this replica alone")
		}
		return HeldSpend{}, false
	}
	return hs, true
}

// raiseHold is shareSpend for a call's hold: once the call's spend so far
// (mine) is past what its hold reserved (floor: a writer that loops, as a
// coding-agent CLI does, beyond its attempt's worst case), the spend is
// left to be held where the other replicas count it, so a check there
// counts it before it lands. It returns the session's spend as known now
// (what the last raise read on every replica, the other calls' holds
// among it, plus this call's hold), or false while the call is within its
// reservation, no raise has answered yet, or the last failed (logged; the
// call counts this process alone for sharedSpendRest).
func (m *stepSpend) raiseHold(mine, floor spent) (spent, bool) {
	if m.holds == nil || (mine.cost <= floor.cost && mine.tokens <= floor.tokens) {
		return spent{}, false
	}
	held := spent{max(mine.cost, floor.cost), max(mine.tokens, floor.tokens)}
	return m.queueNewest(held, m.raiseNewest)
}

// raiseNewest writes the newest pending hold, never below the reservation
// of the call's latest check (floor, read under holdMu, so a check's write
// is never undone by a raise sent before it), and reads the session's
// spend, until nothing is pending, the call has ended or let go, or a
// write fails.
func (m *stepSpend) raiseNewest() {
	for {
		p := m.takePending()
		if p == nil {
			return
		}
		m.holdMu.Lock()
		m.runs.mu.Lock()
		total := spent{max(p.cost, m.floor.cost), max(p.tokens, m.floor.tokens)}
		m.runs.mu.Unlock()
		hs, ok := m.holdSharedLocked(total)
		gone := m.holdGone
		m.holdMu.Unlock()
		m.shareMu.Lock()
		if !ok {
			m.others, m.pending, m.sharing = nil, nil, false
			if m.ctx.Err() == nil && !gone {
				m.quietUntil = time.Now().Add(sharedSpendRest)
			}
			m.shareMu.Unlock()
			return
		}
		m.others = &spent{hs.SpentCost + hs.HeldCost, hs.SpentTokens + hs.HeldTokens}
		m.shareMu.Unlock()
	}
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
			m.letGoShared()
		})
	}
}

// endHold ends the writes of the call's hold, waiting for one on its way
// (nil-safe): called just before the call's spend is recorded, since the
// record takes the hold off in its own write (heldAs), and a raise landing
// after it would write the hold again, counted beside the record on every
// replica until the let-go, or, that lost, until it expires.
func (m *stepSpend) endHold() {
	if m == nil || m.holds == nil {
		return
	}
	m.holdMu.Lock()
	m.holdGone = true
	m.holdMu.Unlock()
}

// heldAs is the key the call's hold is shared under among replicas: the
// call's usage entry names it (SessionEntry.Spender), and the store takes
// the hold off in the entry's write, so the spend is counted once, in the
// ledger or held, at every moment. "" when nothing is shared (nil-safe).
func (m *stepSpend) heldAs() string {
	if m == nil || m.holds == nil {
		return ""
	}
	return m.holdKey
}

// letGoShared deletes the call's hold on every replica once the call is
// done: a call that spent something has had it taken off by its record
// already (heldAs), so this is for one that spent nothing, or whose record
// is still on its way through an outage. One that fails is logged; the
// hold counts until the record lands or it expires.
func (m *stepSpend) letGoShared() {
	if m == nil || m.holds == nil {
		return
	}
	m.holdMu.Lock()
	defer m.holdMu.Unlock()
	m.holdGone = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), sharedSpendWait)
	defer cancel()
	if err := m.holds.LetGoSpend(ctx, m.id, m.holdKey); err != nil {
		m.log.Warn().Err(err).Str("session", m.id).Dur("counted_for_up_to", m.holdTTL).Msg("could not let go of a criteria call's hold on the session's budget; the other replicas count it until it expires")
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

// heldElsewhere is what holds, read from a store that shares them
// (sessions.heldRead), hold of session id's budget beyond the calls in
// flight here: a hold under one of their keys is counted by holding, as
// it stands here now.
func (rs *runs) heldElsewhere(id string, holds []SpendHold) spent {
	if len(holds) == 0 {
		return spent{}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var total spent
	for _, h := range holds {
		if !rs.spends[id].holds(h.Key) {
			total = total.plus(spent{h.Cost, h.Tokens})
		}
	}
	return total
}

// holds tells whether a call in flight here holds under key (nil-safe).
// The caller holds runs.mu.
func (ls *liveSpend) holds(key string) bool {
	if ls == nil {
		return false
	}
	for m := range ls.live {
		if m.reserving && m.holdKey == key {
			return true
		}
	}
	return false
}
