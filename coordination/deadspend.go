package coordination

import (
	"context"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A step whose holder stopped answering mid-call (a replica that died, or
// was cut off past its lock) leaves the spend it had shared on its step
// lock's row (SpendSharingStepLock), where every replica's shares count
// it. Its agent's next step takes the row over and records it
// (recordTakenOver), but an agent that never steps again (the session
// decided meanwhile, finalized, cancelled, or a host that stops stepping
// it) would leave it there for good, outside the ledger that the result,
// overLimit and a run's launch check read. So the session's whole dead
// spend is also taken (DeadSpendStore) and recorded as a run starts, before
// its first launch, and as the session ends.

// deadSpendWhy is the reason a dead holder's spend is recorded under.
const deadSpendWhy = "a step of a replica that stopped answering mid-call, as it last shared its spend"

// takeDeadSpend is the session's dead spend (DeadSpendStore), none for a
// store without it. Every session's steps share their spend on such a
// store, with a budget or without (openSpend), so every session is asked.
// A store that fails is logged: the spend stays on its rows, counted by
// every share, until a run's start, the session's end or its agent's
// next step records it; a session that ended and is never run or ended
// again keeps it out of its result.
func (svc *Service) takeDeadSpend(ctx context.Context, s *Session) []DeadSpend {
	ds, ok := svc.store.(DeadSpendStore)
	if !ok {
		return nil
	}
	dead, err := ds.TakeDeadSpend(ctx, s.ID)
	if err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not take the spend of steps whose holders stopped answering; it stays counted on their step locks")
	}
	return dead // what was taken beside the failure, if any
}

// deadSpendRecord is d as a usage record under its key.
func (svc *Service) deadSpendRecord(d DeadSpend) *usageRecord {
	return svc.sharedSpendRecord(d.Agent, d.Key, d.CostUSD, d.Tokens, deadSpendWhy)
}

// sharedSpendRecord is the spend a holder that stopped answering shared
// under key, as a usage record of agent's: tokens as input, the split
// unknown (a share carries the sum).
func (svc *Service) sharedSpendRecord(agent, key string, cost float64, tokens int64, why string) *usageRecord {
	return svc.newUsageRecord(agent, providers.Usage{Input: tokens, CostUSD: &cost}, why, nil).sharedAs(key)
}

// recordDeadSpend records the session's dead spend, each key through
// recordUsage (an outage holds it back the usual way, counted meanwhile:
// spendspool.go): a run's start, before its first launch checks what the
// budget can pay for.
func (svc *Service) recordDeadSpend(ctx context.Context, s *Session) {
	for _, d := range svc.takeDeadSpend(ctx, s) {
		svc.recordUsage(ctx, s, svc.deadSpendRecord(d), nil)
	}
}

// recordDeadSpendRunOut is recordDeadSpend for a budgeted session once the
// step locks still held with spend on them have run out (HeldSpendStore),
// waiting at most heldSpendWait: a run that takes over from a replica that
// died, as its run lease runs out, would otherwise launch its first wave
// (or make the final call) before the spend the dead steps shared is the
// ledger's, their locks running out up to a heartbeat later. A lock that
// runs out later than that is a live holder's, whose shares count it.
func (svc *Service) recordDeadSpendRunOut(ctx context.Context, s *Session) {
	if hs, ok := svc.store.(HeldSpendStore); ok && s.Rules.budgeted() {
		deadline := time.Now().Add(heldSpendWait)
	wait:
		for {
			d, err := hs.HeldSpendRunsOut(ctx, s.ID)
			if err != nil {
				svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not read when the step locks holding spend run out; the spend of steps whose holders stopped answering is recorded as it stands")
				break
			}
			if d <= 0 || time.Now().Add(d).After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				break wait // recorded as it stands: the caller is stopping
			case <-time.After(d + 50*time.Millisecond):
			}
		}
	}
	svc.recordDeadSpend(context.WithoutCancel(ctx), s)
}

// heldSpendWait bounds recordDeadSpendRunOut's wait: a step lock's
// heartbeat (two seconds on the PostgreSQL store) and a margin, the most a
// dead replica's step locks outlive its run lease.
const heldSpendWait = 3 * time.Second

// recordDeadSpendLocked records the session's dead spend for a caller that
// holds the session lock and is about to end the session (settleLocked's
// finish, markCancelled), l the ledger read under it: each key's rest not
// in l (writeUsage), so the end's result counts it. It says whether it
// wrote anything (the caller reads the ledger again). A write that fails is
// logged: the spend stays on the rows, and what records it later (a run's
// start, another end, the agent's next step) amends the result; if
// nothing does, the result lacks it.
func (svc *Service) recordDeadSpendLocked(ctx context.Context, s *Session, l *Ledger) bool {
	wrote := false
	for _, d := range svc.takeDeadSpend(ctx, s) {
		r := svc.deadSpendRecord(d)
		if r == nil {
			continue
		}
		if err := svc.writeUsage(ctx, s.ID, r, false, l); err != nil {
			svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", d.Agent).Msg("could not record the spend of a step whose holder stopped answering as the session ended; it stays counted on its step lock")
			continue
		}
		wrote = true
	}
	return wrote
}
