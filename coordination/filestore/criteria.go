package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// SetCriteria replaces a session's criteria. session.json is the truth
// (Session reads the criteria from it); eval_criteria.json is MassGen's copy,
// rewritten after it, like status.json is rewritten after the ledger. Each
// file is replaced atomically, so a reader sees the old criteria or the new
// ones, never a torn file. A session MassGen wrote has no session.json: its
// eval_criteria.json is its only record and is replaced alone.
func (s *Store) SetCriteria(ctx context.Context, id string, items []criteria.Item) error {
	dir, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	data, err := readJSONFile(filepath.Join(dir, "session.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeCriteria(dir, id, items)
	case err != nil:
		return fmt.Errorf("cannot read session %q: %w", id, err)
	}
	var sess coordination.Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return fmt.Errorf("session %q has a damaged session.json (%v); restore it or remove the session directory %s", id, err, dir)
	}
	sess.Criteria = items
	sessionJSON, err := marshal(&sess)
	if err != nil {
		return fmt.Errorf("cannot encode session %q: %w", id, err)
	}
	if err := writeAtomic(dir, "session.json", sessionJSON); err != nil {
		return fmt.Errorf("cannot write the criteria of session %q: %w", id, err)
	}
	return writeCriteria(dir, id, items)
}

// writeCriteria replaces eval_criteria.json, in the shape `massgen
// --eval-criteria` reads; no criteria, no file.
func writeCriteria(dir, id string, items []criteria.Item) error {
	if len(items) == 0 {
		if err := os.Remove(filepath.Join(dir, "eval_criteria.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove the criteria of session %q: %w", id, err)
		}
		return nil
	}
	data, err := marshal(criteria.MassGen(items, ""))
	if err != nil {
		return fmt.Errorf("cannot encode the criteria of session %q: %w", id, err)
	}
	if err := writeAtomic(dir, "eval_criteria.json", data); err != nil {
		return fmt.Errorf("cannot write eval_criteria.json of session %q: %w", id, err)
	}
	return nil
}
