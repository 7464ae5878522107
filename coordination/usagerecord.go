package coordination

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// usageGrace bounds how long a call's spend goes on being recorded, through
// an outage, after the call's run or request ended.
const usageGrace = 10 * time.Minute

// usageRecord is a call's spend outside any landed step, to be recorded as
// a session usage entry (a cancelled provider call's reported usage, a step
// cancelled as it landed, a step whose landing gave up with its run while
// the store was unreachable).
type usageRecord struct {
	entry SessionEntry
	// landed, if set, is the step's own entry, looked for in the ledger:
	// an attempt whose answer an outage lost may have written it after
	// all, and then its spend is in the entry and nothing is recorded (it
	// would count twice).
	landed *landing
}

// newUsageRecord is agent's spend u, for why; its time is taken once, so a
// retry can find the entry an attempt wrote before its answer was lost.
func (svc *Service) newUsageRecord(agent string, u providers.Usage, why string, landed *landing) *usageRecord {
	if u.Tokens() == 0 && (u.CostUSD == nil || *u.CostUSD == 0) {
		return nil // nothing reported
	}
	return &usageRecord{entry: SessionEntry{Kind: SessionUsage, Time: svc.now(), Agents: []string{agent}, Usage: &u, Reason: why}, landed: landed}
}

// recordUsage records r (nil: nothing was spent), then settles (a finished
// result is amended with it). Money is the user's, so an unreachable store
// does not lose it: the record goes on in the background
// (recordUsageLater). down is the outage the caller already met, if any:
// then no attempt is made before the first wait.
func (svc *Service) recordUsage(ctx context.Context, s *Session, r *usageRecord, down error) {
	if r == nil {
		return
	}
	if down == nil {
		down = svc.appendUsage(context.WithoutCancel(ctx), s.ID, r, false)
		if down == nil {
			return
		}
		if !svc.storeDown(down) {
			svc.log.Warn().Err(down).Str("session", s.ID).Msg("could not record a call's usage outside its step")
			return
		}
	}
	svc.spool.hold(s.ID, r)
	go svc.recordUsageLater(ctx, s.ID, r, down, svc.spoolSpend(s.ID, r))
}

// recordUsageLater records r once the store answers, trying again the
// outage's way for usageGrace after ctx ended (a run cancelled during an
// outage ends at once; what its calls cost is recorded when the store is
// back). It logs when it begins and when it ends, not at each attempt: a
// thousand runs cancelled in one outage are a thousand of these, and their
// runs are over, so no progress is told either. path is r's spool file
// (spendspool.go), removed once r is recorded and kept if this gives up,
// for serve's next replay to record; "" when there is none.
func (svc *Service) recordUsageLater(ctx context.Context, id string, r *usageRecord, err error, path string) {
	// Not the run's any more: it may end, and let its lease go, before
	// this records; the settle after the record is the session's.
	lctx, done := outlive(withoutRunLease(ctx), usageGrace)
	defer done()
	defer svc.spool.recorded(r) // recorded under the session lock, or given up
	u := r.entry.Usage
	svc.log.Warn().Err(err).Str("session", id).Strs("agents", r.entry.Agents).Int64("tokens", u.Tokens()).Str("kept_in", path).
		Msg("the store is unreachable: a call's spend outside its step is recorded once it answers")
	for tries := 0; svc.storeDown(err); tries++ {
		t := time.NewTimer(outageWait(tries))
		select {
		case <-lctx.Done():
			t.Stop()
			svc.spool.release(path)
			msg := "gave up recording a call's spend: the store stayed unreachable; the session's cost lacks it"
			if path != "" {
				msg = "gave up recording a call's spend for now: the store stayed unreachable; it is kept on disk, and serve records it at its next look at the spool"
			}
			svc.log.Warn().Err(err).Str("session", id).Strs("agents", r.entry.Agents).Int64("tokens", u.Tokens()).Str("kept_in", path).Msg(msg)
			return
		case <-t.C:
		}
		err = svc.appendUsage(lctx, id, r, true)
	}
	switch {
	case errors.Is(err, ErrSessionNotFound):
		svc.unspool(path) // and with its session, the cost it belonged to
		svc.log.Warn().Str("session", id).Msg("a call's spend outside its step was not recorded: its session is gone")
		return
	case err != nil:
		svc.spool.release(path)
		svc.log.Warn().Err(err).Str("session", id).Str("kept_in", path).Msg("could not record a call's usage outside its step")
		return
	}
	svc.unspool(path)
	svc.log.Info().Str("session", id).Strs("agents", r.entry.Agents).Msg("the store answered again: a call's spend outside its step is recorded")
}

// appendUsage is one attempt of recordUsage, under the session lock: the
// usage entry unless the ledger holds the step's entry (r.landed) or, on a
// retry, the usage entry itself (an attempt whose answer was lost wrote
// it), then, either way, a settle.
func (svc *Service) appendUsage(ctx context.Context, id string, r *usageRecord, retried bool) error {
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return err
	}
	var l *Ledger
	if r.landed != nil || retried || r.entry.Spender != "" {
		if l, err = svc.store.Ledger(ctx, id); err != nil {
			unlock()
			return err
		}
	}
	err = svc.writeUsage(ctx, id, r, retried, l)
	unlock()
	if err != nil {
		return err
	}
	// Settled even when the spend was found recorded: the attempt that
	// wrote it (this record's, its answer lost, or the step's landing,
	// whose settle met the outage) did not settle, and a finished result
	// must be amended with it.
	if _, err := svc.settle(ctx, id, "", ""); err != nil {
		svc.log.Warn().Err(err).Str("session", id).Msg("could not settle after recording a call's usage")
	}
	return nil
}

// writeUsage is appendUsage's write, for a caller that holds the session
// lock: l is the ledger read under it, which r needs when it has a landing
// to look for, is retried or names a spend key (nil otherwise).
func (svc *Service) writeUsage(ctx context.Context, id string, r *usageRecord, retried bool, l *Ledger) error {
	recorded := false
	entry := r.entry
	if l != nil {
		recorded = r.landed.in(l) || (retried && slices.ContainsFunc(l.Session, r.is))
		if !recorded && entry.Spender != "" {
			// What was recorded under the same key (by a replica that took
			// the step over, or an attempt of this record whose answer was
			// lost) is counted once: only the rest is recorded.
			rest := spenderRest(*entry.Usage, l, entry.Spender)
			entry.Usage, recorded = &rest, rest.Tokens() <= 0 && (rest.CostUSD == nil || *rest.CostUSD <= 0)
		}
	}
	var err error
	if !recorded {
		// Unfenced by the run's lease: the spend was paid (leasedentries.go).
		_, err = svc.store.AppendSession(ctx, id, entry)
	} else if rs, ok := svc.store.(SpendRecordedStore); ok && entry.Spender != "" {
		// Nothing to write, but a row may count the key still.
		err = rs.SpendRecorded(ctx, id, entry.Spender)
	}
	if err == nil {
		svc.spool.recorded(r) // in the ledger now: counted there, not twice
	}
	return err
}

// is tells whether a stored session entry is r's (its time to the
// millisecond the stores keep, its agent, reason, spend key and tokens: a
// take records each key it inherited at once, alike but for the key).
func (r *usageRecord) is(e SessionEntry) bool {
	return e.Kind == SessionUsage && e.Usage != nil && e.Reason == r.entry.Reason && e.Spender == r.entry.Spender && slices.Equal(e.Agents, r.entry.Agents) &&
		e.Time.Truncate(time.Millisecond).Equal(r.entry.Time.Truncate(time.Millisecond)) && e.Usage.Tokens() == r.entry.Usage.Tokens()
}

// landing is a step's own entry as a usage record looks for it (data, so
// a spooled record carries it): the agent's entry at that step written at
// that time (to the millisecond the stores keep) with that spend. Another
// replica's entry at that step would be its own call's.
type landing struct {
	Agent  string    `json:"agent"`
	Step   int       `json:"step"`
	Time   time.Time `json:"timestamp"`
	Tokens int64     `json:"tokens"`
}

// landedAs is the landing of e as step.
func landedAs(step int, e *Entry) *landing {
	return &landing{Agent: e.Agent, Step: step, Time: e.Time.Truncate(time.Millisecond), Tokens: e.Usage.Tokens()}
}

// in tells whether the ledger holds the landing (nil: none to look for).
func (g *landing) in(l *Ledger) bool {
	if g == nil {
		return false
	}
	for _, x := range l.Agents[g.Agent] {
		if x.Step == g.Step && x.Time.Truncate(time.Millisecond).Equal(g.Time) && x.Usage.Tokens() == g.Tokens {
			return true
		}
	}
	return false
}

// spenderRest is u less what the ledger's usage entries under key record,
// never below zero: the same step's spend, recorded twice, counts as the
// larger record. Tokens come off the input first (a taken-over step's are
// recorded as input, the split unknown).
func spenderRest(u providers.Usage, l *Ledger, key string) providers.Usage {
	var cost float64
	var tokens int64
	for _, e := range l.Session {
		if e.Kind == SessionUsage && e.Spender == key && e.Usage != nil {
			tokens += e.Usage.Tokens()
			if e.Usage.CostUSD != nil {
				cost += *e.Usage.CostUSD
			}
		}
	}
	in := min(u.Input, tokens)
	u.Input -= in
	u.Output -= min(u.Output, tokens-in)
	u.CachedInput, u.Reasoning = min(u.CachedInput, u.Input), min(u.Reasoning, u.Output)
	if u.CostUSD != nil {
		c := max(*u.CostUSD-cost, 0)
		u.CostUSD = &c
	}
	return u
}

// sharedAs names the key the record's spend was shared under among
// replicas (SessionEntry.Spender); "" names none.
func (r *usageRecord) sharedAs(key string) *usageRecord {
	if r != nil {
		r.entry.Spender = key
	}
	return r
}

// recordTakenOver records, for a step lock taken over from a holder that
// stopped answering mid-step (a replica that died), what the lock's row
// carried: that holder's shared spend, and what its own take had inherited
// and not yet seen recorded, each under its key. It was paid, and nobody
// else will record it. A holder that was only cut off and records its own
// spend later names the same key and counts only the rest (appendUsage).
// Until a record lands, the row counts the spend in every replica's budget
// check; if none ever does, the agent's next step inherits it again.
func (svc *Service) recordTakenOver(ctx context.Context, s *Session, agent string, lock StepLock) {
	sl, ok := lock.(SpendSharingStepLock)
	if !ok {
		return
	}
	why := "step " + strconv.Itoa(lock.Step()) + " of a replica that stopped answering mid-call, as it last shared its spend"
	for _, d := range sl.TakenOverSpend() {
		svc.recordUsage(ctx, s, svc.sharedSpendRecord(agent, d.Key, d.CostUSD, d.Tokens, why), nil)
	}
}
