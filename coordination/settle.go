package coordination

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// settle is the one place a session is decided. Under the session lock it
// derives the state, records whatever decision the state calls for (a
// re-vote, or the end), and rewrites status.json. Every step calls it after
// releasing its step lock, so the last step to land always decides and no
// decision is lost. force, if set, ends the session now with that stop
// reason; final, if set, overrides the session's final strategy.
func (svc *Service) settle(ctx context.Context, id string, force StopReason, final FinalStrategy) (settled, error) {
	return svc.settleResult(ctx, id, force, final, true)
}

// settled is what settling leaves: the session, its ledger and derived
// state, and its result.
type settled struct {
	s   *Session
	l   *Ledger
	st  *State
	res *TeamResult // nil for a running session when the caller asked for less
}

// settleResult is settle; without full, a session that goes on running gets
// no result (nil) and no status.json unless the store keeps one: a landing
// step needs only the tally, and building the whole result was a sixth of a
// step's CPU.
func (svc *Service) settleResult(ctx context.Context, id string, force StopReason, final FinalStrategy, full bool) (settled, error) {
	unlock, err := svc.store.LockSession(ctx, id)
	if err != nil {
		return settled{}, err
	}
	defer unlock()
	return svc.settleLocked(ctx, id, force, final, full)
}

// settleLocked is settleResult for a caller that holds the session lock (a
// landing: cancelfence.go). A decision the store refused because a cancel
// or an end landed since its read (sinceread.go: the lock had passed to
// their writer) is made again from a fresh read, which finds the session
// cancelled or ended and decides nothing. Each refusal is another cancel
// (and a resume, for the session to read running again): the bound is for
// a session cancelled and resumed without pause, which then reads as it
// stands.
func (svc *Service) settleLocked(ctx context.Context, id string, force StopReason, final FinalStrategy, full bool) (settled, error) {
	for tries := 1; ; tries++ {
		set, err := svc.settleOnce(ctx, id, force, final, full)
		if !errors.Is(err, ErrChangedSinceRead) || tries == settleTries {
			return set, err
		}
	}
}

// settleTries bounds settleLocked's attempts.
const settleTries = 8

// settleOnce is one attempt of settleLocked.
func (svc *Service) settleOnce(ctx context.Context, id string, force StopReason, final FinalStrategy, full bool) (settled, error) {
	s, l, st, err := svc.sessions.load(ctx, id)
	if err != nil {
		return settled{}, err
	}
	if st.Life.Status == StatusRunning && force == "" {
		if svc.overLimit(s, l) == "" && s.Driver == DriverStep && s.Rules.budgeted() && svc.recordDeadSpendLocked(ctx, s, l) {
			// A step-driven session's steps run on any replica, and one
			// that died mid-step left its spend on its step lock: counted
			// by every step's budget check, but not by the ledger this
			// check reads, so a landing that brought the whole over its
			// budget let the session run on until the next step was
			// refused. (A run-driven session's steps are its run's, and a
			// run records the dead spend as it starts.) Derived with the
			// steps still in flight, as load derived it: a decision, a
			// re-vote and next_agents must not take them for idle.
			var inFlight map[string]bool
			if l, _, inFlight, err = svc.sessions.lendState(ctx, id); err != nil {
				return settled{}, err
			}
			st = svc.sessions.derive(s, l, inFlight)
		}
		if reason := svc.overLimit(s, l); reason != "" {
			force = reason
		}
	}
	if rec := st.Life.Finished; rec != nil {
		// A step in flight when the end was decided, or a cancelled call's
		// usage, landed after it: the result carries it.
		if err := svc.amend(ctx, s, l, st, rec); err != nil {
			return settled{}, err
		}
		if l, err = svc.sessions.ledger(ctx, id); err != nil {
			return settled{}, err
		}
		st = svc.sessions.derive(s, l, nil)
	}
	d := Decide(s, st, force)
	// The decision is the read's: written only while no cancel or end
	// landed since (sinceread.go).
	dctx := withLogRead(ctx, id, st.Life.read()) // st is derived from l
	switch d.Kind {
	case DecideRevote:
		if _, err := svc.appendSession(dctx, id, SessionEntry{Kind: SessionRevote, Time: svc.now(), Agents: d.Revote}); err != nil {
			return settled{}, err
		}
		svc.event(ctx, id, Event{Type: "revote", Message: fmt.Sprintf("votes split; %s asked to vote again", Count(len(d.Revote), "agent")), Data: map[string]any{"agents": d.Revote}})
		var inFlight map[string]bool
		if l, _, inFlight, err = svc.sessions.lendState(ctx, id); err != nil {
			return settled{}, err
		}
		st = svc.sessions.derive(s, l, inFlight)
	case DecideFinish:
		// What steps whose holders stopped answering spent is the
		// session's: in the result, not left on their locks.
		if svc.recordDeadSpendLocked(ctx, s, l) {
			if l, err = svc.sessions.ledger(ctx, id); err != nil {
				return settled{}, err
			}
			st = svc.sessions.derive(s, l, nil)
		}
		res := svc.finishedResult(s, l, st, d, providers.Free())
		if d.Stop == StopTimeout {
			waiting := svc.stillWorking(ctx, s)
			switch {
			case res.NotAgreed != "":
				res.NotAgreed = notAgreed(s, waiting, res, d.How, d.Stop)
			case res.Winner == nil && len(waiting) > 0:
				// No answer at all: the note is the only place that says
				// which provider stalled.
				res.FinalNote = stopCause(s, waiting, res, d.Stop) + "; nobody had answered"
			}
		}
		strategy := s.Rules.Final
		if final != "" {
			strategy = final
		}
		kind := SessionFinished
		if res.Winner != nil && (strategy != FinalWinner || decisionOnly(ctx)) {
			res.Status = StatusDecided
			kind = SessionDecided
		}
		if err := svc.record(dctx, s, kind, res, strategy); err != nil {
			return settled{}, err
		}
		if l, err = svc.sessions.ledger(ctx, id); err != nil {
			return settled{}, err
		}
		st = svc.sessions.derive(s, l, nil)
	}
	if !full && st.Life.Status == StatusRunning && !svc.keepsFiles() {
		return settled{s: s, l: l, st: st}, nil
	}
	res := svc.snapshot(s, l, st)
	// Off the critical path while running: the file store's rename over the
	// old status.json costs a flush, and the next step should not wait for it.
	svc.writeStatusSoon(ctx, s, st, res)
	return settled{s: s, l: l, st: st, res: res}, nil
}

// amend records the finished result again, refreshed, when entries or
// spend landed after it was recorded; the caller holds the session lock.
func (svc *Service) amend(ctx context.Context, s *Session, l *Ledger, st *State, rec *TeamResult) error {
	fresh := svc.refreshed(s, l, st, rec)
	if !stale(rec, fresh) {
		return nil
	}
	// The files were handled as the session first finished.
	if err := svc.recordFinished(ctx, s, fresh, finishedStrategy(l, s), false); err != nil {
		return err
	}
	// The timeline says the session finished once; an amendment is
	// bookkeeping of what landed after it (a spend an outage held back).
	msg := fmt.Sprintf("the finished result now counts what landed after it: %s, %d tokens", Count(fresh.Steps, "step"), fresh.Usage.Input+fresh.Usage.Output)
	if fresh.CostUSD != nil {
		msg += fmt.Sprintf(", $%s", Dollars(*fresh.CostUSD))
	}
	svc.event(ctx, s.ID, Event{Type: "result_amended", Message: msg})
	return nil
}

// record appends a decided or finished entry under the session lock (a
// store that keeps projections writes the final files from a finished one),
// then, for a finish under apply: auto, writes the winner's changes
// (autoApply): after the timeline says it finished, as it happened.
func (svc *Service) record(ctx context.Context, s *Session, kind SessionEntryKind, res *TeamResult, strategy FinalStrategy) error {
	var err error
	if kind == SessionFinished {
		err = svc.recordFinished(ctx, s, res, strategy, true)
	} else {
		_, err = svc.appendSession(ctx, s.ID, SessionEntry{Kind: kind, Time: svc.now(), Result: res, Reason: string(strategy)})
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("session %s", res.Status)
	if res.Winner != nil {
		msg = fmt.Sprintf("%s: %s %s wins (%s, %s)", res.Status, Who(res.Winner.AgentID, res.Winner.Model), Bracket(res.Winner.Label), Deref(res.HowChosen), Deref(res.StopReason))
	} else if res.StopReason != nil {
		msg = fmt.Sprintf("session failed: %s", *res.StopReason)
	}
	svc.event(ctx, s.ID, Event{Type: string(kind), Message: msg})
	if kind == SessionFinished {
		svc.autoApply(ctx, s, res)
	}
	return nil
}

// recordFinished appends a finished entry. The session's first finish
// (first; an amendment only counts what landed after it) previews the
// winner's changes to the write context into res before; every finish
// releases the agents' worktrees once it has landed. Nothing outside the
// store is touched before the write: a finish the store refuses (a lost
// lease, a cancel or end another replica recorded while this one's lock
// was lost) leaves the files as they were.
func (svc *Service) recordFinished(ctx context.Context, s *Session, res *TeamResult, strategy FinalStrategy, first bool) error {
	if first {
		svc.previewChanges(ctx, s, res)
	}
	if _, err := svc.appendSession(ctx, s.ID, SessionEntry{Kind: SessionFinished, Time: svc.now(), Result: res, Reason: string(strategy)}); err != nil {
		return err
	}
	svc.turnFinished(ctx, s, res)
	svc.releaseWorktrees(s)
	return nil
}

// finishCaughtUp does, as a run ends on a finished session whose changes
// apply: auto has not recorded (or a Finalize finds one), what a finish
// does once its write has landed (recordFinished, record): the worktrees
// released and the changes written, under the session lock. A finish
// whose write landed but whose answer was lost (the run waited out the
// outage and found the session finished; a step's caller was told of the
// outage) left them undone. It returns the result as the session now has
// it.
func (svc *Service) finishCaughtUp(ctx context.Context, s *Session, res *TeamResult) *TeamResult {
	if !autoApplyPending(s, res) {
		return res
	}
	unlock, err := svc.store.LockSession(ctx, s.ID)
	if err != nil {
		return res
	}
	defer unlock()
	l, err := svc.sessions.ledger(ctx, s.ID)
	if err != nil {
		return res
	}
	rec := svc.sessions.derive(s, l, nil).Life.Finished
	if rec == nil || !autoApplyPending(s, rec) || svc.applyTriedSinceFinish(ctx, s.ID) {
		return res
	}
	svc.releaseWorktrees(s)
	svc.autoApply(ctx, s, rec.Clone())
	if l, err = svc.sessions.ledger(ctx, s.ID); err != nil {
		return res
	}
	st := svc.sessions.derive(s, l, nil)
	return svc.snapshot(s, l, st)
}

// applyTriedSinceFinish tells whether the timeline says apply: auto's write
// was tried since the session last finished and refused, or made and not
// recorded: its changes stay pending for apply_changes, and no later call
// writes into the project again (each would try, and tell of it, anew). A
// timeline that cannot be read says tried: nothing is written blind.
func (svc *Service) applyTriedSinceFinish(ctx context.Context, id string) bool {
	es, ok := svc.store.(EventSource)
	if !ok {
		return false
	}
	evs, err := es.Events(ctx, id)
	if err != nil {
		return true
	}
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Type {
		case string(SessionFinished):
			return false
		case "apply_refused", "apply_unrecorded":
			return true
		}
	}
	return false
}

// overLimit reports a budget that the ledger has used up ("budget"), or the
// timeout of a session driven step by step ("timeout").
func (svc *Service) overLimit(s *Session, l *Ledger) StopReason {
	r := s.Rules
	if r.budgeted() {
		// With the spend this process holds for it that an outage kept
		// from the ledger (spendspool.go).
		sp := spendOf(l).plus(svc.spool.heldFor(s.ID, l))
		known, tokens := sp.cost, sp.tokens
		if r.CostBudgetUSD != nil && known >= *r.CostBudgetUSD {
			return StopBudget
		}
		if r.TokenBudget != nil && tokens >= *r.TokenBudget {
			return StopBudget
		}
	}
	if s.Driver == DriverStep && r.TimeoutSeconds > 0 && svc.now().Sub(s.CreatedAt) > seconds(r.TimeoutSeconds) {
		return StopTimeout
	}
	return ""
}

func (svc *Service) now() time.Time { return svc.opts.Now().UTC() }

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// current derives a session's state without the session lock, and settles it
// only when something is pending (a decision, a limit). Each step already
// decides after it lands, so a loop that looks again after a landing usually
// has nothing to write.
func (svc *Service) current(ctx context.Context, s *Session) (*Ledger, *State, *TeamResult, error) {
	return svc.currentResult(ctx, s, true)
}

// currentResult is current; without full, a session that goes on running
// gets no result (nil), as in settleResult.
func (svc *Service) currentResult(ctx context.Context, s *Session, full bool) (*Ledger, *State, *TeamResult, error) {
	return svc.currentHeld(ctx, s, nil, full)
}

// runResult is currentResult for a run's loop, whose s was read under the
// run lock (which attaching criteria also takes) and is the kept setup its
// steps derive from: once the ledger shows a step it is final, and served
// (sessions.loadHeld) rather than read again after the derivation that
// found the session ended let the kept one go. Other callers read theirs
// before the ledger, where a first step landing in between may have
// followed criteria they did not see, so they read it again.
func (svc *Service) runResult(ctx context.Context, s *Session, full bool) (*Ledger, *State, *TeamResult, error) {
	return svc.currentHeld(ctx, s, s, full)
}

// currentHeld is currentResult, the setup held served where loadHeld
// says it may be.
func (svc *Service) currentHeld(ctx context.Context, s, held *Session, full bool) (*Ledger, *State, *TeamResult, error) {
	_, l, st, err := svc.sessions.loadHeld(ctx, s.ID, held)
	if err != nil {
		return nil, nil, nil, err
	}
	if st.Life.Status == StatusDecided && svc.decidedTooLong(s) {
		// A step-driven present/synthesize session nobody finalizes would
		// sit decided for ever: its timeout finishes it with the winner.
		res, err := svc.writeFinalFrom(ctx, s, FinalWinner, winnerAsIs("the session's timeout ended it while the final call was pending"))
		if err != nil {
			return nil, nil, nil, err
		}
		_, l, st, err = svc.sessions.loadHeld(ctx, s.ID, held)
		return l, st, res, err
	}
	if st.Life.Status == StatusRunning && (svc.overLimit(s, l) != "" || Decide(s, st, "").Kind != DecideNothing) {
		set, err := svc.settleResult(ctx, s.ID, "", "", full)
		return set.l, set.st, set.res, err
	}
	if !full && st.Life.Status == StatusRunning {
		return l, st, nil, nil
	}
	return l, st, svc.snapshot(s, l, st), nil
}

// decidedTooLong tells whether a decided step-driven session is past its
// timeout (a run's own loop writes the final answer itself).
func (svc *Service) decidedTooLong(s *Session) bool {
	r := s.Rules
	return s.Driver == DriverStep && r.TimeoutSeconds > 0 && svc.now().Sub(s.CreatedAt) > seconds(r.TimeoutSeconds)
}
