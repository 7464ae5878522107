package memstore

import (
	"context"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

var _ coordination.PermissionLog = (*Store)(nil)

// AppendPermission keeps one permission decision.
func (s *Store) AppendPermission(ctx context.Context, id string, rec permissions.Record) error {
	ss, err := s.live(context.WithoutCancel(ctx), id)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.perms = append(ss.perms, rec)
	return nil
}

// Permissions returns a session's permission decisions in order.
func (s *Store) Permissions(ctx context.Context, id string) ([]permissions.Record, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]permissions.Record(nil), ss.perms...), nil
}
