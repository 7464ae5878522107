package pgstore

import (
	"sync"
	"time"
)

// standing is what this replica last learnt of its own registration (the
// replicas row, liveness.go), for a session lock passed from holder to
// holder without a round trip (sessionlock.go) to tell that no reap can
// have expired its row. A reap of this replica asks for its beats silent
// for reapSilent by the database's clock: a beat that found the row, sent
// less than reapSilent ago (this replica's clock; only the two intervals
// compare, whatever the clocks' offset), leaves none since. A reap deletes
// the row and a registration made again writes a new one, so a beat that
// found a row leaves none before it either, since a take older than the
// registration's making.
type standing struct {
	mu   sync.Mutex
	beat time.Time // when the last beat (or registration) that found the row was sent
	made time.Time // when the last registration was answered
}

// registered marks a registration sent at sent and answered now: a beat too
// (it sets beat_at).
func (s *standing) registered(sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beat, s.made = sent, time.Now()
}

// beaten marks a beat sent at sent that found the row.
func (s *standing) beaten(sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sent.After(s.beat) {
		s.beat = sent
	}
}

// reapable tells whether a reap may have expired a lock row this replica
// took at taken (sent then): its last beat is reapSilent old, or its
// registration was made again since.
func (s *standing) reapable(taken time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.beat) >= reapSilent || s.made.After(taken)
}
