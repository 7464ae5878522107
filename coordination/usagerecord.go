package coordination

import (
	"context"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// usageGrace bounds how long a call's spend goes on being recorded, through
// an outage, after the call's run or request ended.
const usageGrace = 10 * time.Minute

// recordUsage records spend outside any landed step (a cancelled provider
// call's reported usage, a step cancelled as it landed, a step whose landing
// gave up with its run while the store was unreachable) as a session usage
// entry, then settles (a finished result is amended with it).
//
// landed, if set, reads the ledger for the step's own entry: an attempt
// whose answer an outage lost may have written it after all, and then its
// spend is in the entry and nothing is recorded (it would count twice).
//
// Money is the user's, so an unreachable store does not lose it: the entry
// is tried again in the background, the outage's way, for usageGrace after
// ctx ended (a run cancelled during an outage ends at once; what its calls
// cost is recorded once the store answers).
func (svc *Service) recordUsage(ctx context.Context, s *Session, agent string, u providers.Usage, why string, landed func(*Ledger) bool) {
	if u.Tokens() == 0 && (u.CostUSD == nil || *u.CostUSD == 0) {
		return // nothing reported
	}
	err := svc.appendUsage(context.WithoutCancel(ctx), s.ID, agent, u, why, landed)
	switch {
	case err == nil:
	case svc.storeDown(err):
		go svc.recordUsageLater(ctx, s, agent, u, why, landed, err)
	default:
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not record a call's usage outside its step")
	}
}

// recordUsageLater is recordUsage's outage loop.
func (svc *Service) recordUsageLater(ctx context.Context, s *Session, agent string, u providers.Usage, why string, landed func(*Ledger) bool, err error) {
	lctx, done := outlive(ctx, usageGrace)
	defer done()
	var down outage
	what := "recording the spend of a call of " + agent
	for svc.storeDown(err) {
		if svc.pause(lctx, s, what, &down, err) != nil {
			svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", agent).Int64("tokens", u.Tokens()).
				Msg("gave up recording a call's spend: the store stayed unreachable; the session's cost lacks it")
			return
		}
		err = svc.appendUsage(lctx, s.ID, agent, u, why, landed)
	}
	if err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not record a call's usage outside its step")
		return
	}
	svc.over(lctx, s, what, &down)
}

// appendUsage is one attempt of recordUsage: under the session lock, unless
// landed finds the step's entry, the usage entry, then a settle.
func (svc *Service) appendUsage(ctx context.Context, id, agent string, u providers.Usage, why string, landed func(*Ledger) bool) error {
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return err
	}
	if landed != nil {
		l, err := svc.store.Ledger(ctx, id)
		if err != nil {
			unlock()
			return err
		}
		if landed(l) {
			unlock()
			return nil
		}
	}
	_, err = svc.store.AppendSession(ctx, id, SessionEntry{Kind: SessionUsage, Time: svc.now(), Agents: []string{agent}, Usage: &u, Reason: why})
	unlock()
	if err != nil {
		return err
	}
	if _, err := svc.settle(ctx, id, "", ""); err != nil {
		svc.log.Warn().Err(err).Str("session", id).Msg("could not settle after recording a call's usage")
	}
	return nil
}

// landedAs tells whether the ledger holds the agent's entry e for step:
// the entry at that step written at e's time (to the millisecond the stores
// keep) with e's spend. Another replica's entry at that step would be its
// own call's.
func landedAs(step int, e *Entry) func(*Ledger) bool {
	at := e.Time.Truncate(time.Millisecond)
	return func(l *Ledger) bool {
		for _, x := range l.Agents[e.Agent] {
			if x.Step == step && x.Time.Truncate(time.Millisecond).Equal(at) && x.Usage.Tokens() == e.Usage.Tokens() {
				return true
			}
		}
		return false
	}
}
