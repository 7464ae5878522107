package coordination

import (
	"context"
	"fmt"
	"time"
)

// A session created for a run (DriverRun) is written first and its run
// claims its run lease a moment later (Create, then Start). A server that
// dies between the two leaves a session no run holds and no lease names:
// read by the lease alone it would be running for ever, on every replica,
// and no server resuming interrupted runs would take it up. So a session
// created for a run that no run has ever claimed reads interrupted once
// NeverStartedGrace has passed since its creation ended (Session.ReadyAt),
// and is resumed as any interrupted run is. A step-driven session has no
// run lease by design and is not read so.
//
// The grace counts from the end of Create, not from CreatedAt: the
// session's row is written before its images and its workspaces' starting
// files are stored (a write context's base, sent to a database, may be
// hundreds of MB), and counted from CreatedAt, stamped before the models
// were checked too, a creation slower than the grace was taken up by
// another replica while its creator was still creating it. A session whose
// creation never recorded its end (cut short, or written before the end
// was kept) is read so only UnfinishedCreationGrace after it began: past
// any creation still under way, and never left running for ever.

// NeverStartedGrace is how long after its creation ended (Session.ReadyAt)
// a session created for a run may go without its run claiming it before it
// reads interrupted. Between the two the creator only starts the run (it
// may wait for the store); a minute covers that and the clocks' difference
// between the server that created it and the one reading it
// (MaxClockSkew), so a run about to start is never taken up.
const NeverStartedGrace = time.Minute

// UnfinishedCreationGrace is how long after its creation began (CreatedAt)
// a session created for a run whose creation never recorded its end
// (ReadyAt zero: its creator died part-way, or it was written before the
// end was kept) may go unclaimed before it reads interrupted. It is long
// past any creation still under way; without it such a session would read
// running for ever with nothing running it. Taken up, its run starts from
// whatever starting files were stored.
const UnfinishedCreationGrace = 10 * time.Minute

// createdBy is when s's creator was last known alive, and how long its run
// may go unclaimed from then before s reads interrupted.
func createdBy(s *Session) (time.Time, time.Duration) {
	if s.ReadyAt.IsZero() {
		return s.CreatedAt, UnfinishedCreationGrace
	}
	return s.ReadyAt, NeverStartedGrace
}

// neverStarted tells whether s, whose run lease is l (nil: never claimed),
// is a session created for a run that nothing has touched in the
// NeverStartedGrace since its creation ended (unstarted): its creator
// stopped before starting it.
func (svc *Service) neverStarted(ctx context.Context, s *Session, l *RunLease) bool {
	at, grace := createdBy(s)
	if l != nil {
		return false
	}
	return (svc.now().Sub(at) > grace || s.Creator.gone()) && svc.unstarted(ctx, s)
}

// unstarted tells whether s was created for a run (createdForARun) and
// its ledger holds nothing yet but spend: no step and no session entry
// other than usage. Create records the criteria call written for the team
// (TeamSpec.CriteriaUsage) as a usage entry as soon as the session's row
// is stored; that spend starts nothing, and counted as a touch it left a
// session whose creator died before its run reading running for ever. A
// session refused its run (Service.NotStarted: cancelled) or stepped by
// its client since has entries, and is not one its creator left. A ledger
// that cannot be read says no: the session reads as it did. The
// PostgreSQL store's own look for such sessions (Abandoned) asks the same
// of its rows: no session entry but usage entries (migration 26).
func (svc *Service) unstarted(ctx context.Context, s *Session) bool {
	if !createdForARun(s) {
		return false
	}
	l, _, err := svc.sessions.lend(ctx, s.ID)
	if err != nil {
		return false
	}
	for _, e := range l.Session {
		if e.Kind != SessionUsage {
			return false
		}
	}
	for _, entries := range l.Agents {
		if len(entries) > 0 {
			return false
		}
	}
	return true
}

// createdForARun tells whether s was created to be run by the server's run
// loop (not stepped by its caller, nor written by MassGen).
func createdForARun(s *Session) bool {
	return s.Driver == DriverRun && !s.Foreign
}

// tookUpUnclaimed marks c, a claim that found no run lease (c.first) in s,
// as one taking up a session created for a run and untouched since
// (unstarted), by another start than this one: if it fails it leaves its
// lease to expire, so the session reads interrupted again, where released
// it would read running with nothing running it. Past the grace, the
// session read interrupted: the timeline says who took it up (how), as a
// resume from a dead run does.
func (svc *Service) tookUpUnclaimed(ctx context.Context, s *Session, c *runClaim, how string) {
	if !c.first || !svc.unstarted(ctx, s) {
		return
	}
	c.interrupted = true
	at, grace := createdBy(s)
	if svc.now().Sub(at) <= grace && !s.Creator.gone() {
		return
	}
	svc.event(ctx, s.ID, Event{Type: "resumed", Message: fmt.Sprintf("session %s: the server that created it at %s stopped before its run began",
		how, at.UTC().Format(time.RFC3339))})
	svc.log.Info().Str("session", s.ID).Time("created", at).Msg("session " + how + ": the server that created it stopped before its run began")
}
