package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Human agents' questions as rows (migrations 0008, 0009): any replica's call
// waiting on a session finds the question a run asked on another, and the
// reply it stores is read by that run (coordination.QuestionBox).

var _ coordination.QuestionBox = (*Store)(nil)

// PostQuestion stores a new open question.
func (s *Store) PostQuestion(ctx context.Context, id string, q coordination.Question) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	q.Asked = ms(q.Asked)
	data, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("encoding question %s of session %q: %w", q.ID, id, err)
	}
	// A retry after a commit whose answer was lost finds its row: posted.
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO questions (tenant, session_id, id, asked_at, question, run)
		SELECT $1, $2, $3, $4, $5, $6 FROM sessions WHERE tenant = $1 AND id = $2
		ON CONFLICT (tenant, session_id, id) DO NOTHING`, s.tenant, id, q.ID, q.Asked, data, q.Run)
	if err != nil {
		return fmt.Errorf("storing question %s of session %q: %w", q.ID, id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var run int64
	err = s.db.pool.QueryRow(ctx, `SELECT run FROM questions WHERE tenant = $1 AND session_id = $2 AND id = $3`, s.tenant, id, q.ID).Scan(&run)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(id)
	case err != nil:
		return fmt.Errorf("storing question %s of session %q: %w", q.ID, id, err)
	case run != q.Run:
		return fmt.Errorf("storing question %s of session %q: another run asked a question by that id", q.ID, id)
	}
	return nil
}

// OpenQuestions lists the questions neither answered nor closed, oldest
// first.
func (s *Store) OpenQuestions(ctx context.Context, id string) ([]coordination.Question, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT question FROM questions
		WHERE tenant = $1 AND session_id = $2 AND reply IS NULL AND NOT closed ORDER BY asked_at, id`, s.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading the open questions of session %q: %w", id, err)
	}
	qs, err := collectJSON[coordination.Question](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the open questions of session %q: %w", id, err)
	}
	return qs, nil
}

// LeftQuestions lists the questions not closed, answered or not, oldest
// first, each with its reply.
func (s *Store) LeftQuestions(ctx context.Context, id string) ([]coordination.Question, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT question, reply, run FROM questions
		WHERE tenant = $1 AND session_id = $2 AND NOT closed ORDER BY asked_at, id`, s.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading the questions left in session %q: %w", id, err)
	}
	defer rows.Close()
	var qs []coordination.Question
	for rows.Next() {
		var q coordination.Question
		var data, reply []byte
		var run int64
		if err := rows.Scan(&data, &reply, &run); err != nil {
			return nil, fmt.Errorf("reading the questions left in session %q: %w", id, err)
		}
		if err := json.Unmarshal(data, &q); err != nil {
			return nil, fmt.Errorf("a question left in session %q is damaged: %w", id, err)
		}
		q.Run = run
		if reply != nil {
			q.Reply = new(providers.Reply)
			if err := json.Unmarshal(reply, q.Reply); err != nil {
				return nil, fmt.Errorf("the reply to question %s of session %q is damaged: %w", q.ID, id, err)
			}
		}
		qs = append(qs, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the questions left in session %q: %w", id, err)
	}
	return qs, nil
}

// AnswerQuestion stores the reply to an open question; the first stands.
func (s *Store) AnswerQuestion(ctx context.Context, id, question string, r providers.Reply) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the reply to question %s: %w", question, err)
	}
	tag, err := s.db.pool.Exec(ctx, `UPDATE questions SET reply = $4, answered_at = now()
		WHERE tenant = $1 AND session_id = $2 AND id = $3 AND reply IS NULL AND NOT closed`, s.tenant, id, question, data)
	if err != nil {
		return fmt.Errorf("storing the reply to question %s of session %q: %w", question, id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s in session %s", coordination.ErrNoQuestion, question, id)
	}
	return nil
}

// QuestionReply reads a question's reply, if it has one.
func (s *Store) QuestionReply(ctx context.Context, id, question string) (providers.Reply, bool, error) {
	var r providers.Reply
	if err := live(ctx, id); err != nil {
		return r, false, err
	}
	found, err := oneJSON(s.db.pool.QueryRow(ctx, `SELECT reply FROM questions WHERE tenant = $1 AND session_id = $2 AND id = $3 AND reply IS NOT NULL`,
		s.tenant, id, question), &r, fmt.Sprintf("the reply to question %s of session %q", question, id))
	return r, found, err
}

// CloseQuestion ends a question of run nobody waits for, or whose reply
// was taken; a reply stored first stays readable. A question another run
// has taken over is not closed.
func (s *Store) CloseQuestion(ctx context.Context, id, question string, run int64) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	if _, err := s.db.pool.Exec(ctx, `UPDATE questions SET closed = true WHERE tenant = $1 AND session_id = $2 AND id = $3 AND run = $4 AND NOT closed`,
		s.tenant, id, question, run); err != nil {
		return fmt.Errorf("closing question %s of session %q: %w", question, id, err)
	}
	return nil
}

// TakeQuestion moves a question from run from to run to, unless it was
// closed or another run took it first.
func (s *Store) TakeQuestion(ctx context.Context, id, question string, from, to int64) (bool, error) {
	if err := live(ctx, id); err != nil {
		return false, err
	}
	tag, err := s.db.pool.Exec(ctx, `UPDATE questions SET run = $5 WHERE tenant = $1 AND session_id = $2 AND id = $3 AND run = $4 AND NOT closed`,
		s.tenant, id, question, from, to)
	if err != nil {
		return false, fmt.Errorf("taking over question %s of session %q: %w", question, id, err)
	}
	return tag.RowsAffected() == 1, nil
}
