package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// AppendEvent adds one line to the session's timeline.
func (s *Store) AppendEvent(ctx context.Context, id string, ev coordination.Event) error {
	if err := coordination.CheckSessionID(id); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	ev.Time = ms(ev.Time)
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding an event of session %q: %w", id, err)
	}
	// One statement, so one round trip (a transaction of its own was five:
	// a fifth of a step's round trips). The timeline is not protocol state
	// (the file store does not fsync it either): set_config makes its
	// commit not wait for the WAL flush; the NOTIFY goes only if the row
	// went in, and is delivered only when it commits.
	err = s.db.pool.QueryRow(ctx, `WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true)),
		ins AS (INSERT INTO events (tenant, session_id, at, event)
			SELECT $1, $2, $3, $4 FROM sessions, cfg WHERE tenant = $1 AND id = $2 RETURNING 1)
		SELECT pg_notify($5, $6) FROM ins`,
		s.tenant, id, ev.Time, data, s.db.channel, s.changePayload(id, coordination.Change{Events: true})).Scan(nil)
	if errors.Is(err, pgx.ErrNoRows) {
		err = notFound(id)
	}
	if err != nil {
		return fmt.Errorf("adding an event to session %q: %w", id, err)
	}
	s.db.feeds.publish(s.tenant, id, coordination.Change{Events: true})
	return nil
}

// Events reads the session's timeline, oldest first.
func (s *Store) Events(ctx context.Context, id string) ([]coordination.Event, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	if err := s.exists(ctx, s.db.pool, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT event FROM events WHERE tenant = $1 AND session_id = $2 ORDER BY n`, s.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading the timeline of session %q: %w", id, err)
	}
	evs, err := collectJSON[coordination.Event](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the timeline of session %q: %w", id, err)
	}
	if evs == nil {
		evs = []coordination.Event{}
	}
	return evs, nil
}
