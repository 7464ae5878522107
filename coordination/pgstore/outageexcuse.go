package pgstore

import (
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// outageSeen is this replica's last outage of the database, as its LISTEN
// connection saw it: that connection is always open, so a database that
// restarts, or refuses connections, is seen at once (one silent behind a
// partition, within the dead-peer probes of dial.go).
type outageSeen struct {
	mu         sync.Mutex
	lost, back time.Time // back before lost: lost still
}

func (o *outageSeen) lostAt(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lost = t
}

func (o *outageSeen) heard(t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.back = t
}

// excuse marks l Alive when coordination.ExcusedByOutage excuses it: its
// holder may have been cut off as this replica was, and has a TTL of the
// database answering to renew. Every lease this store reads goes through
// it, and so does the lease a claim is decided on (claim): a reader sees
// the run going on, and a claim is refused as for a live holder.
func (db *DB) excuse(l *coordination.RunLease) {
	if l == nil {
		return
	}
	db.outage.mu.Lock()
	lost, back := db.outage.lost, db.outage.back
	db.outage.mu.Unlock()
	if coordination.ExcusedByOutage(l, lost, back, time.Now()) {
		l.Alive = true
	}
}
