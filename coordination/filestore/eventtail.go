package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// EventTail reads the timeline's latest n events, oldest first, and counts
// them all. Only those n are decoded; the rest are only checked to be
// whole JSON (json.Valid), so a line that does not parse (a crashed
// writer's torn tail) is counted no more than Events returns it.
func (s *Store) EventTail(ctx context.Context, id string, n int) ([]coordination.Event, int, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	data, err := readFile(filepath.Join(dir, "events.jsonl"), maxTimeline)
	if errors.Is(err, fs.ErrNotExist) {
		return []coordination.Event{}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("cannot read the timeline of session %q: %w", id, err)
	}
	latest := []coordination.Event{}
	total := 0
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.LastIndexByte(rest[:len(rest)-1], '\n'); i >= 0 {
			line, rest = rest[i+1:], rest[:i+1]
		} else {
			rest = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(latest) < n {
			var ev coordination.Event
			if json.Unmarshal(line, &ev) == nil {
				latest = append(latest, ev)
				total++
			}
		} else if json.Valid(line) {
			total++
		}
	}
	slices.Reverse(latest)
	return latest, total, nil
}
