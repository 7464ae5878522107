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
// NeverStartedGrace has passed since its creation, and is resumed as any
// interrupted run is. A step-driven session has no run lease by design and
// is not read so.

// NeverStartedGrace is how long after its creation a session created for a
// run may go without its run claiming it before it reads interrupted. Its
// creation time is stamped before the models are checked (up to 10 s a
// models list) and its starting files stored (a write context's base, sent
// to a database), both before its run is started; a minute covers them and
// the clocks' difference between the server that created it and the one
// reading it (MaxClockSkew), so a creation under way is never taken up.
const NeverStartedGrace = time.Minute

// neverStarted tells whether s, whose run lease is l (nil: never claimed),
// is a session created for a run that no run has claimed in the
// NeverStartedGrace since its creation: its creator stopped before
// starting it.
func (svc *Service) neverStarted(s *Session, l *RunLease) bool {
	return l == nil && createdForARun(s) && svc.now().Sub(s.CreatedAt) > NeverStartedGrace
}

// createdForARun tells whether s was created to be run by the server's run
// loop (not stepped by its caller, nor written by MassGen).
func createdForARun(s *Session) bool {
	return s.Driver == DriverRun && !s.Foreign
}

// tookUpUnclaimed marks c, a claim that found no run lease (c.first) in s,
// as one taking up a session created for a run by another start than this
// one: if it fails it leaves its lease to expire, so the session reads
// interrupted again, where released it would read running with nothing
// running it. Past the grace, the session read interrupted: the timeline
// says who took it up (how), as a resume from a dead run does.
func (svc *Service) tookUpUnclaimed(ctx context.Context, s *Session, c *runClaim, how string) {
	if !c.first || !createdForARun(s) {
		return
	}
	c.interrupted = true
	if !svc.neverStarted(s, nil) {
		return
	}
	svc.event(ctx, s.ID, Event{Type: "resumed", Message: fmt.Sprintf("session %s: the server that created it at %s stopped before its run began",
		how, s.CreatedAt.UTC().Format(time.RFC3339))})
	svc.log.Info().Str("session", s.ID).Time("created", s.CreatedAt).Msg("session " + how + ": the server that created it stopped before its run began")
}
