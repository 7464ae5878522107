package pgstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A session entry commits, then notifies (commitThenNotify). One whose
// connection was lost between the two committed unheard, and its caller
// was told the database was unavailable: the caller does not write it
// again but reads the log first once the outage ends (coordination's
// "look before recording"), and that read finds it. A landing's retry
// finds its entry the same way (storedIs) and tells the other replicas
// then (notifyCommitted); an entry's finding is a read of the log, so this
// replica keeps the entries in doubt until one of its reads finds them,
// and tells the other replicas then, as the landing's retry does. Without
// it another replica heard of a cancel or a finish only at the session's
// next change, or at a follower's poll.

// unheardMax bounds the entries kept in doubt: a replica cut off for long
// while its runs write must not grow with them. One dropped is heard at
// the session's next change, as before.
const unheardMax = 256

// doubtedEntry is a session entry whose transaction's outcome is unknown:
// its session, and its kind and time, which tell it from the session's
// other entries (two of one kind in the same millisecond are one retried).
type doubtedEntry struct {
	tenant, id string
	kind       coordination.SessionEntryKind
	at         time.Time
}

// unheard is this replica's session entries in doubt, oldest first.
type unheard struct {
	n  atomic.Int32 // len(es): a read checks nothing, and takes no lock, while none is in doubt
	mu sync.Mutex
	es []doubtedEntry
}

// add keeps d in doubt, dropping the oldest beyond unheardMax.
func (u *unheard) add(d doubtedEntry) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.es) >= unheardMax {
		u.es = slices.Delete(u.es, 0, len(u.es)-unheardMax+1)
	}
	u.es = append(u.es, d)
	u.n.Store(int32(len(u.es)))
}

// found drops the entries in doubt of session (tenant, id) that log, just
// read, holds, and tells whether there was one.
func (u *unheard) found(tenant, id string, log []coordination.SessionEntry) bool {
	if u.n.Load() == 0 || len(log) == 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	hit := false
	u.es = slices.DeleteFunc(u.es, func(d doubtedEntry) bool {
		if d.tenant != tenant || d.id != id {
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

// heardFound tells the other replicas of the session's entries in doubt
// that log, just read from the database, holds (notifyCommitted, as a
// landing found on its retry is told). The read's context may end as it
// returns: the NOTIFY is sent without it.
func (s *Store) heardFound(ctx context.Context, id string, log []coordination.SessionEntry) {
	if s.db.unheard.found(s.tenant, id, log) {
		s.notifyCommitted(context.WithoutCancel(ctx), id, coordination.Change{Session: true})
	}
}
