package coordination

import (
	"context"
	"errors"
	"fmt"
)

// A decision is made on a read of the session log under the session lock:
// settle reads the log, finds the session running and writes a re-vote, a
// decision or the end; resume reads it cancelled and writes the resume.
// Where the session lock can pass to a second holder while the first still
// writes (the PostgreSQL store's lock is a row of an unlogged table with an
// expiry: a replica stalled past it, a VM paused, a database crash that
// emptied the table), a cancel recorded and acknowledged by that second
// holder could be overruled by the first one's decision, made on a read
// from before the cancel: the session would read decided or finished (a
// finished entry outranks a cancel) after its user was told "cancelled",
// and its final call would be paid for. Such a store fences the decision
// in its write (UncancelledSessionStore), by the cancels the read counted,
// as it fences a step's landing (UncancelledLanding); a decision refused so
// is made again from a fresh read, which finds the session cancelled.

// UncancelledSessionStore is implemented by a store whose session lock can
// pass to a second holder while the first still writes: its
// AppendSessionUncancelled is AppendSession (AppendSessionLeased when
// version is not 0) made only while the session log holds no more
// cancelled entries than cancels, counted in the write itself, so that no
// cancel lands between the count and the write. Otherwise it writes
// nothing and fails with CancelledSinceRead, or with ErrLeaseLost when
// the claim is not current, whatever the cancels (a lost claim stops its
// run, where a cancel would have it decide again).
type UncancelledSessionStore interface {
	AppendSessionUncancelled(ctx context.Context, id string, version int64, cancels int, e SessionEntry) (SessionEntry, error)
}

// ErrCancelledSinceRead refuses a decision made on a read of the session
// log that a cancel recorded since has made stale.
var ErrCancelledSinceRead = errors.New("the session was cancelled since its log was read")

// CancelledSinceRead is the error of a session entry not written because
// the session was cancelled since the writer read its log, in the words
// every store's fence uses.
func CancelledSinceRead(id string, kind SessionEntryKind) error {
	return fmt.Errorf("%w: the %s entry of session %q was not written", ErrCancelledSinceRead, kind, id)
}

// cancelFenced tells whether a session entry of kind decides on the log's
// read, and so must not land after a cancel that read did not count: a
// re-vote, a decision, an end, a resume. A cancel itself, a spend, an
// apply do not (a spend is the user's money, recorded whatever happened).
func cancelFenced(kind SessionEntryKind) bool {
	switch kind {
	case SessionRevote, SessionDecided, SessionFinished, SessionResumed:
		return true
	}
	return false
}

// cancelsReadKey carries, in a decision's context, how many cancels the
// log it decided on held (see withCancelsRead).
type cancelsReadKey struct{}

type cancelsRead struct {
	id string
	n  int
}

// withCancelsRead is ctx for the writes of a decision on session id's log
// read with n cancelled entries: appendSession fences the deciding ones
// (cancelFenced) by n where the store can. Carried in the context, as the
// run's claim is, since the decision's writes go through record and its
// helpers, which the count would otherwise have to be threaded through.
func withCancelsRead(ctx context.Context, id string, n int) context.Context {
	return context.WithValue(ctx, cancelsReadKey{}, cancelsRead{id: id, n: n})
}

// cancelsFence is the cancels that fence e's write in ctx, or -1 for none.
func cancelsFence(ctx context.Context, id string, e SessionEntry) int {
	if c, ok := ctx.Value(cancelsReadKey{}).(cancelsRead); ok && c.id == id && cancelFenced(e.Kind) {
		return c.n
	}
	return -1
}

// uncancelledSinceRead checks, before a finish touches anything outside
// the store (the winner's files applied to the write context, worktrees
// released), that no cancel landed since the read e is decided on, where
// the store's lock cannot be trusted to keep one out: the fenced write
// that follows refuses it, but only after the files were touched. A read,
// not a fence, as runLeaseHeld's.
func (svc *Service) uncancelledSinceRead(ctx context.Context, id string, e SessionEntry) error {
	n := cancelsFence(ctx, id, e)
	if _, ok := svc.store.(UncancelledSessionStore); !ok || n < 0 {
		return nil
	}
	// Not ended by the caller's going: the write it guards is not either.
	l, err := svc.sessions.ledger(context.WithoutCancel(ctx), id)
	if err != nil {
		return err
	}
	if cancelledSince(l, n) {
		return CancelledSinceRead(id, e.Kind)
	}
	return nil
}
