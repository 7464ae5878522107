package pgstore

import (
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// outageSeen is this replica's last outage of the database: lost when it
// began, as first seen (the LISTEN connection, always open, failing; or a
// statement failing as unreachable, Unavailable), and back when the
// database was first heard again (the LISTEN connection made again, or a
// lease read answered). An outage goes on while back is before lost; a
// failure seen then does not move lost, so a long outage excuses every
// lease that ran out in it.
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
// holder. An outage is counted from silentFor before it was seen: a
// database gone silent is seen only when a statement or the LISTEN
// connection gives up on it (dial.go), and a lease that ran out in
// between ran out in the outage.
func (db *DB) excuse(l *coordination.RunLease) {
	if l == nil {
		return
	}
	db.outage.mu.Lock()
	lost, back := db.outage.lost, db.outage.back
	db.outage.mu.Unlock()
	if !lost.IsZero() {
		lost = lost.Add(-silentFor)
	}
	if coordination.ExcusedByOutage(l, lost, back, time.Now()) {
		l.Alive = true
	}
}
