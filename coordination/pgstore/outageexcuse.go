package pgstore

import (
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// outageSeen is this replica's last outage of the database: lost when it
// began, as first seen (the LISTEN connection, always open, failing; a
// statement failing as unreachable, Unavailable, or sent and not answered
// in lateAnswer: answerwatch.go), and back when the database was first
// heard again (the LISTEN connection made again, or a statement answered).
// An outage goes on while back is before lost; a failure seen then does
// not move lost, so a long outage excuses every lease that ran out in it.
// An outage this replica did not see going on, but learnt of once it was
// over, is marked whole (spanned): a statement answered late, the
// database's restart before Open (restartseen.go).
type outageSeen struct {
	mu         sync.Mutex
	lost, back time.Time
}

// lostAt marks an outage seen at t, unless one is going on.
func (o *outageSeen) lostAt(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lost.IsZero() || !o.back.Before(o.lost) {
		o.lost = t
	}
}

// spanned marks an outage from lost to back learnt of once it was over.
// One that overlaps the last (going on or not) is joined to it, a later
// one takes its place, and an earlier one changes nothing: the last
// outage is the one that excuses (excuse).
func (o *outageSeen) spanned(lost, back time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	going := o.back.Before(o.lost)
	switch {
	case o.lost.IsZero() || !going && lost.After(o.back):
		o.lost, o.back = lost, back
	case back.Before(o.lost):
	case going:
		o.lost = minTime(o.lost, lost)
	default:
		o.lost, o.back = minTime(o.lost, lost), maxTime(o.back, back)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// heard marks the database heard at t, ending an outage going on.
func (o *outageSeen) heard(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.back.Before(o.lost) {
		o.back = t
	}
}

// excuse marks l Alive when coordination.ExcusedByOutage excuses it: its
// holder may have been cut off as this replica was, and has a TTL of the
// database answering to renew. Every lease this store reads goes through
// it, and so does the lease another process's claim is decided on (claim):
// a reader sees the run going on, and the claim is refused as for a live
// holder.
func (db *DB) excuse(l *coordination.RunLease) {
	if l == nil {
		return
	}
	lost, back := db.outage.span()
	if coordination.ExcusedByOutage(l, lost, back, time.Now()) {
		l.Alive = true
	}
}

// lockTakeover is the expiry before which a lock row (locks.go, lockTTL
// long) may be taken over from its holder now: nil when no outage excuses
// any (the database's now() decides alone), else the time before which a
// row ran out before the outage and is a dead holder's
// (coordination.OutageExcuses). A step lock taken from a holder cut off as
// this replica was would run its step twice, paid twice.
func (db *DB) lockTakeover() *time.Time {
	lost, back := db.outage.span()
	since, ok := coordination.OutageExcuses(lockTTL, lost, back, time.Now())
	if !ok {
		return nil
	}
	return &since
}

// span is the outage as the excuse counts it: from silentFor before it was
// seen, for a database gone silent is seen only when a statement or the
// LISTEN connection gives up on it (dial.go), and a lease that ran out in
// between ran out in the outage.
func (o *outageSeen) span() (lost, back time.Time) {
	o.mu.Lock()
	lost, back = o.lost, o.back
	o.mu.Unlock()
	if !lost.IsZero() {
		lost = lost.Add(-silentFor)
	}
	return lost, back
}
