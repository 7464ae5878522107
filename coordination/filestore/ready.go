package filestore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// SetReady records the session's ReadyAt (and, given, its creator) in
// session.json, replaced atomically as SetCriteria replaces it (ready_at
// and creator are ours: MassGen reads no session.json). Only Create calls
// it, for a session it wrote or one it finishes creating.
func (s *Store) SetReady(ctx context.Context, id string, at time.Time, by *coordination.Creator) error {
	dir, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	data, err := readJSONFile(filepath.Join(dir, "session.json"))
	if err != nil {
		return fmt.Errorf("cannot read session %q: %w", id, err)
	}
	var sess coordination.Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return fmt.Errorf("session %q has a damaged session.json (%v); restore it or remove the session directory %s", id, err, dir)
	}
	sess.ReadyAt = at.UTC()
	if by != nil {
		sess.Creator = by
	}
	sessionJSON, err := marshal(&sess)
	if err != nil {
		return fmt.Errorf("cannot encode session %q: %w", id, err)
	}
	if err := writeAtomic(dir, "session.json", sessionJSON); err != nil {
		return fmt.Errorf("cannot record that session %q is created: %w", id, err)
	}
	return nil
}
