package pgstore

import (
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// outageSeen is this replica's last outage of the database: lost when it
// began, as first seen (the LISTEN connection, always open, failing; a
// statement failing as unreachable or refused as read-only, Unavailable,
// or failing as unreachable after waiting: answerwatch.go), and back when
// the database was first heard again (the LISTEN connection made again,
// or a statement answered). A failure seen while one goes on does not
// move lost, so a long outage excuses every lease that ran out in it. One
// this replica did not see going on, but learnt of once it was over, is
// marked whole: the database's restart before Open (restarted,
// restartseen.go).
//
// One that begins within joinWithin of the last one's end is the same
// outage: the last one's excuse still runs then, and a database that
// answers reads between refused writes (read-only for a while) would
// otherwise end it at each answer and begin a new one at each refusal,
// each excusing only the leases that ran out in it.
//
// A statement answered late (answerWatch) is kept apart, in late, and
// joins only a late answer it overlaps: it is an answer, the database
// reached again, not a refusal, and slow statements now and then (a lock
// waited on, a large prune, every few seconds) joined into one outage
// kept its start at the first of them, so that every lease that ran out
// since was excused, a dead run read running and no claim took it, and
// this replica reaped no dead one, for as long as they kept coming. Each
// excuses what ran out near it, as a cut that long would. Nor does one
// hold reaps off (reapHeldOff): no connection of this replica was lost,
// and the liveness locks (liveness.go) are held on connections that a
// database answering late, or cut off for less than silentFor, does not
// end.
type outageSeen struct {
	mu         sync.Mutex
	lost, back time.Time
	going      bool
	late       outageSpan
}

// outageSpan is an outage from lost to back; back before lost (zero) while
// it goes on, as coordination reads it.
type outageSpan struct{ lost, back time.Time }

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

// restarted marks an outage from lost to back that ended every
// connection, learnt of once it was over (the database's restart). One
// that overlaps the last (going on or not), or follows it within
// joinWithin, is joined to it; a later one takes its place; an earlier one
// changes nothing: the last outage is the one that excuses (excuse).
func (o *outageSeen) restarted(lost, back time.Time) {
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

// spanned marks a statement sent at lost and answered late at back
// (answerWatch). One that overlaps the last late answer (statements
// waiting together) is joined to it, reaching back no more than silentFor
// before its own sending: a cut that fails no statement is shorter than
// that, so the statements it held were all sent within it, and slow
// statements that overlap one another without end are not one cut. A
// later one takes the last one's place; an earlier one changes nothing.
// One sent before an outage seen going on moves its start back, as a late
// failure does (answerWatch), but none is joined to a seen outage that is
// over (outageSeen says why).
func (o *outageSeen) spanned(lost, back time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.going {
		o.lost = minTime(o.lost, lost)
	}
	switch l := &o.late; {
	case l.lost.IsZero() || lost.After(l.back):
		l.lost, l.back = lost, back
	case back.Before(l.lost):
	default:
		l.lost, l.back = maxTime(minTime(l.lost, lost), lost.Add(-silentFor)), maxTime(l.back, back)
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

// since tells whether an outage was seen going on at any time after t: a
// lock row taken before may have been lost with the unlogged locks table
// (a crash, a failover) and taken by another replica.
func (o *outageSeen) since(t time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.going || o.back.After(t) || o.lost.After(t)
}

// heard marks the database heard at t, ending an outage going on.
func (o *outageSeen) heard(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.going {
		o.back, o.going = t, false
	}
}

// excuse marks l Alive when coordination.ExcusedByOutage excuses it, by
// the last outage or the last late answer: its holder may have been cut
// off as this replica was, and has a TTL of the database answering to
// renew. Every lease this store reads goes through it, and so does the
// lease another process's claim is decided on (claim): a reader sees the
// run going on, and the claim is refused as for a live holder.
func (db *DB) excuse(l *coordination.RunLease) {
	if l == nil {
		return
	}
	now := time.Now()
	for _, o := range db.outage.spans() {
		if coordination.ExcusedByOutage(l, o.lost, o.back, now) {
			l.Alive = true
			return
		}
	}
}

// lockTakeover is the expiry before which a lock row (locks.go, lockTTL
// long) may be taken over from its holder now: nil when no outage excuses
// any (the database's now() decides alone), else the time before which a
// row ran out before the outage and is a dead holder's
// (coordination.OutageExcuses), the earlier of the last outage's and the
// last late answer's. A step lock taken from a holder cut off as this
// replica was would run its step twice, paid twice.
func (db *DB) lockTakeover() *time.Time {
	now := time.Now()
	var since *time.Time
	for _, o := range db.outage.spans() {
		if s, ok := coordination.OutageExcuses(lockTTL, o.lost, o.back, now); ok && (since == nil || s.Before(*since)) {
			since = &s
		}
	}
	return since
}

// reapHeldOff tells whether an outage that ended connections, this
// replica's and so perhaps every replica's, excuses holders now: a
// replica's liveness lock free and its beats silent may then be a live
// one's cut off as this one was, and none is reaped (liveness.go). A late
// answer does not hold reaps off (outageSeen says why).
func (db *DB) reapHeldOff() bool {
	o := db.outage.spans()[0]
	_, ok := coordination.OutageExcuses(lockTTL, o.lost, o.back, time.Now())
	return ok
}

// spans are the last outage and the last late answer as the excuse counts
// them: from silentFor before each was seen, for a database gone silent is
// seen only when a statement or the LISTEN connection gives up on it
// (dial.go), and a lease that ran out in between ran out in the outage.
// One going on has back zero, before lost, as coordination reads it.
func (o *outageSeen) spans() [2]outageSpan {
	o.mu.Lock()
	out := [2]outageSpan{{o.lost, o.back}, o.late}
	if o.going {
		out[0].back = time.Time{}
	}
	o.mu.Unlock()
	for i := range out {
		if !out[i].lost.IsZero() {
			out[i].lost = out[i].lost.Add(-silentFor)
		}
	}
	return out
}

// span is the one of spans whose excuse runs last: a test waits it out.
func (o *outageSeen) span() (lost, back time.Time) {
	s := o.spans()
	last := s[0]
	if !s[0].back.Before(s[0].lost) && s[1].back.After(s[0].back) {
		last = s[1]
	}
	return last.lost, last.back
}
