package memstore

import (
	"context"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.SessionDeleter = (*Store)(nil)

// DeleteSession implements coordination.SessionDeleter: the session and
// everything kept with it (ledger, timeline, leases, images, audit) leave
// the map at once. A lock or watch still held on it holds only the dropped
// record, which no reader finds again.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if _, err := s.live(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	_, ok := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if !ok { // deleted since live looked
		_, err := s.get(id)
		return err
	}
	return nil
}
