package coordination

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// A decision is made on a read of the session log under the session lock:
// settle reads the log, finds the session running and writes a re-vote, a
// decision or the end; resume reads it cancelled and writes the resume.
// Where the session lock can pass to a second holder while the first still
// writes (the PostgreSQL store's lock is a row of an unlogged table with an
// expiry: a replica stalled past it, a VM paused, a database crash that
// emptied the table), what that holder records and tells its caller could
// be overruled by the first one's decision, made on a read from before it:
// a cancel acknowledged (a finished entry outranks a cancel, and a decided
// one's final call would be paid for), or the session decided and ended
// with a final answer given (the later end would replace it, its final
// call paid for again). Such a store fences the decision in its write
// (ReadFencedSessionStore), by the cancels and ends its read counted, as
// it fences a step's landing by the cancels (UncancelledLanding); a
// decision refused so is made again from a fresh read, which finds the
// session cancelled or ended and decides nothing.

// LogRead is what a decision's read of the session log held that a later
// entry would make stale: its cancelled entries, and its decided and
// finished ones (ends).
type LogRead struct {
	Cancels int
	Ends    int
}

// endsOnly is r fenced by its ends alone: for a decided session's final
// answer, which no cancel stops (Cancel refuses a decided session, and one
// read before the decision and written after it leaves it decided), and
// only another end may overrule.
func (r LogRead) endsOnly() LogRead {
	r.Cancels = math.MaxInt32 // the most a store's count is compared with
	return r
}

// read is what lc's log held that a later entry would make stale.
func (lc Lifecycle) read() LogRead { return LogRead{Cancels: lc.Cancels, Ends: lc.Ends} }

// ReadFencedSessionStore is implemented by a store whose session lock can
// pass to a second holder while the first still writes: its
// AppendSessionSinceRead is AppendSession (AppendSessionLeased when
// version is not 0) made only while the session log holds no more
// cancelled entries than read.Cancels and no more decided and finished
// ones than read.Ends, counted in the write itself, so that nothing lands
// between the count and the write. Otherwise it writes nothing and fails
// with ChangedSinceRead, or with ErrLeaseLost when the claim is not
// current, whatever the counts (a lost claim stops its run, where a
// changed log would have it decide again).
type ReadFencedSessionStore interface {
	AppendSessionSinceRead(ctx context.Context, id string, version int64, read LogRead, e SessionEntry) (SessionEntry, error)
}

// ErrChangedSinceRead refuses a decision made on a read of the session log
// that a cancel or an end recorded since has made stale.
var ErrChangedSinceRead = errors.New("the session was cancelled or decided since its log was read")

// ChangedSinceRead is the error of a session entry not written because
// the session was cancelled or decided since the writer read its log, in
// the words every store's fence uses.
func ChangedSinceRead(id string, kind SessionEntryKind) error {
	return fmt.Errorf("%w: the %s entry of session %q was not written", ErrChangedSinceRead, kind, id)
}

// readFenced tells whether a session entry of kind decides on the log's
// read, and so must not land after a cancel or an end that read did not
// count: a re-vote, a decision, an end, a resume. A cancel itself (a
// decided or finished entry outranks it, and Cancel then says the run got
// there first), a spend (the user's money, recorded whatever happened), an
// apply do not.
func readFenced(kind SessionEntryKind) bool {
	switch kind {
	case SessionRevote, SessionDecided, SessionFinished, SessionResumed:
		return true
	}
	return false
}

// logReadKey carries, in a decision's context, what the log it decided on
// held (see withLogRead).
type logReadKey struct{}

type logRead struct {
	id   string
	read LogRead
}

// withLogRead is ctx for the writes of a decision on session id's log,
// read as r (Lifecycle.read): appendSession fences the deciding ones
// (readFenced) by it where the store can. Carried in the context, as the
// run's claim is, since the decision's writes go through record and its
// helpers, which the counts would otherwise have to be threaded through.
func withLogRead(ctx context.Context, id string, r LogRead) context.Context {
	return context.WithValue(ctx, logReadKey{}, logRead{id: id, read: r})
}

// readFence is the read that fences e's write in ctx; ok is false for none.
func readFence(ctx context.Context, id string, e SessionEntry) (LogRead, bool) {
	if r, ok := ctx.Value(logReadKey{}).(logRead); ok && r.id == id && readFenced(e.Kind) {
		return r.read, true
	}
	return LogRead{}, false
}
