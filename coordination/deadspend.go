package coordination

import (
	"context"

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
// A store that fails is logged: the spend stays on its rows, counted there,
// for the next take to find.
func (svc *Service) takeDeadSpend(ctx context.Context, s *Session) []DeadSpend {
	ds, ok := svc.store.(DeadSpendStore)
	if !ok {
		return nil
	}
	dead, err := ds.TakeDeadSpend(ctx, s.ID)
	if err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not take the spend of steps whose holders stopped answering; it stays counted on their step locks")
		return nil
	}
	return dead
}

// deadSpendRecord is d as a usage record under its key (tokens as input,
// the split unknown, as recordTakenOver records them).
func (svc *Service) deadSpendRecord(d DeadSpend) *usageRecord {
	cost := d.CostUSD
	return svc.newUsageRecord(d.Agent, providers.Usage{Input: d.Tokens, CostUSD: &cost}, deadSpendWhy, nil).sharedAs(d.Key)
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

// recordDeadSpendLocked records the session's dead spend for a caller that
// holds the session lock and is about to end the session (settleLocked's
// finish, markCancelled), l the ledger read under it: each key's rest not
// in l (writeUsage), so the end's result counts it. It says whether it
// wrote anything (the caller reads the ledger again). A write that fails is
// logged: the spend stays on the rows, and what records it later amends the
// result.
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
