package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// Create stores the session; ErrSessionExists if its id is taken in this
// tenant.
func (s *Store) Create(ctx context.Context, sess *coordination.Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if sess == nil {
		return fmt.Errorf("there is no session to create: %w", coordination.ErrBadInput)
	}
	if err := coordination.CheckSessionID(sess.ID); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range sess.Agents {
		if err := coordination.CheckAgentID(a.ID); err != nil {
			return err
		}
		if seen[a.ID] {
			return fmt.Errorf("agent id %q appears twice in the team; give every agent its own id: %w", a.ID, coordination.ErrBadInput)
		}
		seen[a.ID] = true
	}
	setup := *sess
	setup.Foreign = false // a session MassGen wrote on disk; never one here
	// ReadyAt is kept in its own column (SetReady), where the look for runs
	// never started reads it (leases.go), and only there.
	setup.ReadyAt = time.Time{}
	data, err := json.Marshal(&setup)
	if err != nil {
		return fmt.Errorf("encoding session %q: %w", sess.ID, err)
	}
	var ready *time.Time
	if !sess.ReadyAt.IsZero() {
		ready = &sess.ReadyAt
	}
	_, err = s.db.pool.Exec(ctx, `INSERT INTO sessions (tenant, id, created_at, ready_at, setup) VALUES ($1, $2, $3, $4, $5)`,
		s.tenant, sess.ID, sess.CreatedAt, ready, data)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("session %q already exists; choose another id, or leave it out for a generated one: %w", sess.ID, coordination.ErrSessionExists)
	}
	if err != nil {
		return fmt.Errorf("storing session %q: %w", sess.ID, err)
	}
	return nil
}

// Session loads the session's setup, a fresh copy each call.
func (s *Store) Session(ctx context.Context, id string) (*coordination.Session, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	var data []byte
	var ready *time.Time
	err := s.db.pool.QueryRow(ctx, `SELECT setup, ready_at FROM sessions WHERE tenant = $1 AND id = $2`, s.tenant, id).Scan(&data, &ready)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading session %q: %w", id, err)
	}
	var out coordination.Session
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("session %q is stored damaged: %w", id, err)
	}
	if ready != nil {
		out.ReadyAt = ready.UTC()
	}
	return &out, nil
}

var _ coordination.Births = (*Store)(nil)

// Born implements coordination.Births: the creation time of the session
// stored under id, which another replica may have deleted and made again.
func (s *Store) Born(ctx context.Context, id string) (time.Time, error) {
	if err := live(ctx, id); err != nil {
		return time.Time{}, err
	}
	var born time.Time
	err := s.db.pool.QueryRow(ctx, `SELECT created_at FROM sessions WHERE tenant = $1 AND id = $2`, s.tenant, id).Scan(&born)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, notFound(id)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading when session %q was created: %w", id, err)
	}
	return born, nil
}

// SetReady records the session's ReadyAt in its row's ready_at and, given,
// its creator in its setup.
func (s *Store) SetReady(ctx context.Context, id string, at time.Time, by *coordination.Creator) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	if by != nil {
		return s.setReadyBy(ctx, id, at, by)
	}
	tag, err := s.db.pool.Exec(ctx, `UPDATE sessions SET ready_at = $3 WHERE tenant = $1 AND id = $2`, s.tenant, id, at)
	if err != nil {
		return fmt.Errorf("recording that session %q is created: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(id)
	}
	return nil
}

// setReadyBy is SetReady naming a new creator: the setup is read, changed
// and written back in one transaction, its row held as SetCriteria holds
// it (NO KEY UPDATE: inserts referencing the session go on).
func (s *Store) setReadyBy(ctx context.Context, id string, at time.Time, by *coordination.Creator) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var data []byte
		err := tx.QueryRow(ctx, `SELECT setup FROM sessions WHERE tenant = $1 AND id = $2 FOR NO KEY UPDATE`, s.tenant, id).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		var sess coordination.Session
		if err := json.Unmarshal(data, &sess); err != nil {
			return fmt.Errorf("session %q is stored damaged: %w", id, err)
		}
		sess.Creator = by
		if data, err = json.Marshal(&sess); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE sessions SET setup = $3, ready_at = $4 WHERE tenant = $1 AND id = $2`, s.tenant, id, data, at)
		return err
	})
	if err != nil && !errors.Is(err, coordination.ErrSessionNotFound) {
		return fmt.Errorf("recording that session %q is created: %w", id, err)
	}
	return err
}

// Sessions lists the tenant's session ids, oldest first (ties by id, byte
// order as coordination.OldestFirst compares).
func (s *Store) Sessions(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT id FROM sessions WHERE tenant = $1 ORDER BY created_at, id COLLATE "C"`, s.tenant)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

// SetCriteria replaces the session's criteria in its stored setup, and
// refuses (coordination.ErrSessionStarted) once an agent has stepped or is
// stepping.
func (s *Store) SetCriteria(ctx context.Context, id string, items []criteria.Item) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var data []byte
		// NO KEY UPDATE: the key is not changed, and a plain FOR UPDATE
		// would hold up every insert that references the session (its
		// foreign key takes KEY SHARE) — the replica's grouped timeline
		// write among them, and with it every session's events.
		err := tx.QueryRow(ctx, `SELECT setup FROM sessions WHERE tenant = $1 AND id = $2 FOR NO KEY UPDATE`, s.tenant, id).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		// The rule itself, read once the row is held (a landing holds it
		// FOR SHARE, so one that committed while this waited is seen): the
		// caller checked it under the session lock, but a lock row lapses,
		// and a stalled holder's heartbeat may put it back after another
		// replica took it, stepped and let go.
		var stepped, stepping bool
		if err := tx.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM entries WHERE tenant = $1 AND session_id = $2),
			EXISTS (SELECT 1 FROM locks WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND expires_at >= now())`,
			s.tenant, id).Scan(&stepped, &stepping); err != nil {
			return err
		}
		if stepped || stepping {
			return fmt.Errorf("%w: an agent has stepped in %s (through another replica), and every agent's prompt must stay the same for the whole run", coordination.ErrSessionStarted, id)
		}
		var sess coordination.Session
		if err := json.Unmarshal(data, &sess); err != nil {
			return fmt.Errorf("session %q is stored damaged: %w", id, err)
		}
		sess.Criteria = items
		if data, err = json.Marshal(&sess); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE sessions SET setup = $3 WHERE tenant = $1 AND id = $2`, s.tenant, id, data)
		return err
	})
}

// SaveView records the view last issued to a host agent.
func (s *Store) SaveView(ctx context.Context, id, agent string, v coordination.IssuedView) error {
	if err := coordination.CheckSessionID(id); err != nil {
		return err
	}
	if err := coordination.CheckAgentID(agent); err != nil {
		return err
	}
	v.IssuedAt = ms(v.IssuedAt)
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO views (tenant, session_id, agent_id, view)
		SELECT $1, $2, $3, $4 FROM sessions WHERE tenant = $1 AND id = $2
		ON CONFLICT (tenant, session_id, agent_id) DO UPDATE SET view = EXCLUDED.view`, s.tenant, id, agent, data)
	if err != nil {
		return fmt.Errorf("saving the view of agent %q in session %q: %w", agent, id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(id)
	}
	return nil
}

// View reads the view last issued to a host agent, nil if none was.
func (s *Store) View(ctx context.Context, id, agent string) (*coordination.IssuedView, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	if err := coordination.CheckAgentID(agent); err != nil {
		return nil, err
	}
	var data []byte
	err := s.db.pool.QueryRow(ctx, `SELECT v.view FROM sessions s
		LEFT JOIN views v ON v.tenant = s.tenant AND v.session_id = s.id AND v.agent_id = $3
		WHERE s.tenant = $1 AND s.id = $2`, s.tenant, id, agent).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the view of agent %q in session %q: %w", agent, id, err)
	}
	if data == nil {
		return nil, nil
	}
	var v coordination.IssuedView
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("the view of agent %q in session %q is stored damaged: %w", agent, id, err)
	}
	return &v, nil
}
