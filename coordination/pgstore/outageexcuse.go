package pgstore

import (
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// outageSeen is this replica's last outage of the database: lost when it
// began, as first seen (the LISTEN connection, always open, failing; a
// statement failing as unreachable or refused as read-only, Unavailable,
// or sent and not answered in lateAnswer: answerwatch.go), and back when
// the database was first heard again (the LISTEN connection made again,
// or a statement answered). A failure seen while one goes on does not
// move lost, so a long outage excuses every lease that ran out in it. An
// outage this replica did not see going on, but learnt of once it was
// over, is marked whole (spanned): a statement answered late, the
// database's restart before Open (restartseen.go).
//
// One that begins within joinWithin of the last one's end is the same
// outage: the last one's excuse still runs then, and a database that
// answers reads between refused writes (read-only for a while) would
// otherwise end it at each answer and begin a new one at each refusal,
// each excusing only the leases that ran out in it.
type outageSeen struct {
	mu         sync.Mutex
	lost, back time.Time
	going      bool
}

// joinWithin is how soon after an outage's end another joins it: a lock's
// TTL and the clock allowance, as long as its excuse lasts (OutageExcuses).
const joinWithin = lockTTL + coordination.MaxClockSkew

// lostAt marks an outage seen at t, unless one is going on.
func (o *outageSeen) lostAt(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.going {
		return
	}
	if o.lost.IsZero() || t.After(o.back.Add(joinWithin)) {
		o.lost = t
	} else {
		o.lost = minTime(o.lost, t) // a late failure's statement sent before it
	}
	o.going = true
}

// spanned marks an outage from lost to back learnt of once it was over.
// One that overlaps the last (going on or not), or follows it within
// joinWithin, is joined to it; a later one takes its place; an earlier one
// changes nothing: the last outage is the one that excuses (excuse).
func (o *outageSeen) spanned(lost, back time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.lost.IsZero() || !o.going && lost.After(o.back.Add(joinWithin)):
		o.lost, o.back, o.going = lost, back, false
	case back.Before(o.lost):
	case o.going:
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
	if o.going {
		o.back, o.going = t, false
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
// One going on has back zero, before lost, as coordination reads it.
func (o *outageSeen) span() (lost, back time.Time) {
	o.mu.Lock()
	lost, back = o.lost, o.back
	if o.going {
		back = time.Time{}
	}
	o.mu.Unlock()
	if !lost.IsZero() {
		lost = lost.Add(-silentFor)
	}
	return lost, back
}
