package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// EventTail reads the latest n events of the session's timeline, oldest
// first, and counts them all, in one query: the latest n come from the end
// of the primary key's index (tenant, session_id, n), so a status poll of a
// long session no longer decodes its whole history. The count is the last
// number, read there too rather than counting every entry: a session's
// events are numbered 1 to the last with no gap, in the order they commit
// (eventsInsert), so at any snapshot the two are equal.
func (s *Store) EventTail(ctx context.Context, id string, n int) ([]coordination.Event, int, error) {
	if err := live(ctx, id); err != nil {
		return nil, 0, err
	}
	if err := s.exists(ctx, s.db.pool, id); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT c.total, e.event FROM
			(SELECT coalesce(max(n), 0) AS total FROM events WHERE tenant = $1 AND session_id = $2) c
			LEFT JOIN LATERAL (SELECT n, event FROM events WHERE tenant = $1 AND session_id = $2 ORDER BY n DESC LIMIT $3) e ON true
		ORDER BY e.n`, s.tenant, id, max(n, 0))
	if err != nil {
		return nil, 0, fmt.Errorf("reading the timeline of session %q: %w", id, err)
	}
	defer rows.Close()
	evs := []coordination.Event{}
	total := 0
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&total, &data); err != nil {
			return nil, 0, fmt.Errorf("reading the timeline of session %q: %w", id, err)
		}
		if data == nil {
			continue // no events: the count's row alone
		}
		var ev coordination.Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return nil, 0, fmt.Errorf("reading the timeline of session %q: a stored row is damaged: %w", id, err)
		}
		evs = append(evs, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("reading the timeline of session %q: %w", id, err)
	}
	return evs, total, nil
}
