package pgstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A change whose connection was lost after it was sent, before its
// answer came, is in doubt: it may have committed, or may yet. Its
// writer was told the database was unavailable. A NOTIFY sent then, on
// another connection, could reach the other replicas before the commit
// is visible (or before the commit at all, a statement still running on
// the server): they read, find nothing, and hear of it no more until the
// session's next change. So this replica keeps each change in doubt, and
// tells the other replicas of it (notifyCommitted) only once one of its
// own reads has found it committed:
//
//   - A session entry commits, then notifies (commitThenNotify). Its
//     caller does not write it again but reads the log first once the
//     outage ends (coordination's "look before recording"), and that read
//     finds it (heardFound), as a landing's retry finds its entry
//     (storedIs).
//   - A permission decision, or an expiry of asks, is written once and
//     nobody reads it back on this replica, so the replica looks for its
//     records itself until it finds them (unheardlook.go).
//
// One set, bounded, serves both, and a read checks one atomic counter
// while nothing is in doubt. Without it another replica heard of a cancel
// or a finish only at the session's next change, or at a follower's poll,
// and of a decision whose NOTIFY was sent in doubt perhaps never.

// unheardMax bounds the changes kept in doubt: a replica cut off for long
// while its runs write must not grow with them. One dropped is heard at
// the session's next change, as before.
const unheardMax = 256

// doubted is a change whose transaction's outcome is unknown, in its
// session: a session entry (kind and time, which tell it from the
// session's other entries: two of one kind in the same millisecond are
// one retried), or permission records (records).
type doubted struct {
	tenant, id string
	kind       coordination.SessionEntryKind
	at         time.Time
	// records are what a decision or an expiry of asks would have added
	// to the permission log; any one of them found there is its commit.
	records []doubtedRecord
	since   time.Time // when it was put in doubt: records are looked for until doubtLookFor after
	seq     uint64    // tells it from every other change in doubt
}

// doubtedRecord is a permission record as its write sent it: its time
// and its JSON text, kept by the log as sent.
type doubtedRecord struct {
	at   time.Time
	text string
}

// change is what the other replicas are told of d once it is found.
func (d doubted) change() coordination.Change {
	if d.records != nil {
		return coordination.Change{Permissions: true}
	}
	return coordination.Change{Session: true}
}

// unheard is this replica's changes in doubt, oldest first.
type unheard struct {
	n  atomic.Int32 // len(es): a read checks nothing, and takes no lock, while none is in doubt
	mu sync.Mutex
	es []doubted
	// seq numbers the changes put in doubt.
	seq uint64
	// looking says a look for records in doubt is under way (unheardlook.go),
	// looker waits for it, and closed (DB.Close) starts no other.
	looking bool
	closed  bool
	looker  sync.WaitGroup
}

// add keeps d in doubt, dropping the oldest beyond unheardMax, and tells
// whether its caller must start a look for it: d has records and no look
// is under way.
func (u *unheard) add(d doubted) (look bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.es) >= unheardMax {
		u.es = slices.Delete(u.es, 0, len(u.es)-unheardMax+1)
	}
	u.seq++
	d.seq = u.seq
	u.es = append(u.es, d)
	u.n.Store(int32(len(u.es)))
	if d.records == nil || u.looking || u.closed {
		return false
	}
	u.looking = true
	u.looker.Add(1)
	return true
}

// found drops the session entries in doubt of session (tenant, id) that
// log, just read, holds, and tells whether there was one.
func (u *unheard) found(tenant, id string, log []coordination.SessionEntry) bool {
	if u.n.Load() == 0 || len(log) == 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	hit := false
	u.es = slices.DeleteFunc(u.es, func(d doubted) bool {
		if d.tenant != tenant || d.id != id || d.records != nil {
			return false
		}
		for _, e := range log {
			if e.Kind == d.kind && e.Time.Equal(d.at) {
				hit = true
				return true
			}
		}
		return false
	})
	u.n.Store(int32(len(u.es)))
	return hit
}

// doubt keeps d in doubt, and starts the look for its records if it has
// some and none is under way.
func (db *DB) doubt(d doubted) {
	d.since = time.Now()
	if db.unheard.add(d) {
		go db.lookForUnheard()
	}
}

// heardFound tells the other replicas of the session's entries in doubt
// that log, just read from the database, holds (notifyCommitted, as a
// landing found on its retry is told). The read's context may end as it
// returns: the NOTIFY is sent without it.
func (s *Store) heardFound(ctx context.Context, id string, log []coordination.SessionEntry) {
	if s.db.unheard.found(s.tenant, id, log) {
		s.notifyCommitted(context.WithoutCancel(ctx), id, coordination.Change{Session: true})
	}
}
