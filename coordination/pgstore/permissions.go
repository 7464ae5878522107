package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// The permission audit and the approval handshake as rows (migration
// 0003): what the file store keeps as permissions.jsonl and as
// requests/<id>.json → responses/<id>.json in the session's directory, so
// an ask on a server with this store is answered by `massgen-mcp approve
// <id> --store postgres://…` from any machine that reaches the database.

var (
	_ coordination.PermissionLog = (*Store)(nil)
	_ coordination.ApprovalBox   = (*Store)(nil)
)

// AppendPermission appends one decision. Like the file store's fsynced
// line, its commit waits for the WAL: an audit that loses its last
// decisions in a crash would not be one.
func (s *Store) AppendPermission(ctx context.Context, id string, rec permissions.Record) error {
	if err := coordination.CheckSessionID(id); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	rec.Time = ms(rec.Time)
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding a permission decision of session %q: %w", id, err)
	}
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO permission_log (tenant, session_id, at, agent_id, outcome, record)
		SELECT $1, $2, $3, $4, $5, $6 FROM sessions WHERE tenant = $1 AND id = $2`, s.tenant, id, rec.Time, rec.Agent, string(rec.Outcome), data)
	if err != nil {
		s.inDoubt(id, err, []doubtedRecord{{at: rec.Time, text: string(data)}})
		return fmt.Errorf("adding a permission decision to session %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(id)
	}
	s.notifyCommitted(ctx, id, coordination.Change{Permissions: true})
	return nil
}

// Permissions reads a session's decisions in the order they were made.
func (s *Store) Permissions(ctx context.Context, id string) ([]permissions.Record, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	if err := s.exists(ctx, s.db.pool, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT record FROM permission_log WHERE tenant = $1 AND session_id = $2 ORDER BY n`, s.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading the permission log of session %q: %w", id, err)
	}
	recs, err := collectJSON[permissions.Record](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the permission log of session %q: %w", id, err)
	}
	return recs, nil
}

// RequestApproval stores an ask for a person.
func (s *Store) RequestApproval(ctx context.Context, id string, req permissions.ApprovalRequest) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	req.Asked, req.Expires = ms(req.Asked), ms(req.Expires)
	req.Agent, req.Tool, req.Rule = noNul(req.Agent), noNul(req.Tool), noNul(req.Rule)
	req.Action.Target = noNul(req.Action.Target)
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding an approval request of session %q: %w", id, err)
	}
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO approval_requests (tenant, session_id, id, asked_at, request)
		SELECT $1, $2, $3, $4, $5 FROM sessions WHERE tenant = $1 AND id = $2`, s.tenant, id, req.ID, req.Asked, data)
	if err != nil {
		return fmt.Errorf("storing approval request %s of session %q: %w", req.ID, id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(id)
	}
	s.notifyCommitted(ctx, id, coordination.Change{Permissions: true})
	return nil
}

// noNul is s with each NUL (U+0000) shown as U+FFFD, for an ask's texts (a
// command a model wrote, a person's reason). In JSON a NUL is the escape
// \u0000, which PostgreSQL's JSON operators cannot decode: one such request
// made every read of its session's asks fail (their lapse is read as
// request->>'expires'), and the web view and `approve`, which take a failed
// read for none pending, showed no ask of the session again. The ask is
// answered by its id, so the shown text only has to read as asked; the
// permission log, read back whole and never decoded in SQL, keeps the
// command as it was.
func noNul(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// ApprovalAnswer reads a request's answer, if it has one.
func (s *Store) ApprovalAnswer(ctx context.Context, id, request string) (permissions.ApprovalResponse, bool, error) {
	var r permissions.ApprovalResponse
	if err := live(ctx, id); err != nil {
		return r, false, err
	}
	found, err := oneJSON(s.db.pool.QueryRow(ctx, `SELECT response FROM approval_responses WHERE tenant = $1 AND session_id = $2 AND id = $3`, s.tenant, id, request),
		&r, fmt.Sprintf("the answer to approval request %s of session %q", request, id))
	return r, found, err
}

// lapsedAfter is how long past its expiry, by the database's clock, a
// request has lapsed: its asker refuses it at the expiry by its own clock,
// which may be coordination.MaxClockSkew behind another's (as a lease
// expiry is read, coordination.RunLease.Held), so a live asker's request
// is never taken for lapsed while it still waits. $n is the parameter
// holding the skew in seconds.
func lapsedAfter(n int) string {
	return fmt.Sprintf(`(q.request->>'expires')::timestamptz < now() - make_interval(secs => $%d)`, n)
}

var skewSeconds = coordination.MaxClockSkew.Seconds()

// AnswerApproval stores the answer to a request; the first one stands. A
// request that has lapsed (lapsedAfter) takes no approval
// (permissions.ErrExpired): its asker is gone, and a yes would stand for a
// call nobody makes. A refusal is stored whatever the expiry: it can do no
// harm, and a late asker's own must stand.
func (s *Store) AnswerApproval(ctx context.Context, id string, resp permissions.ApprovalResponse) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	resp.At = ms(resp.At)
	resp.By, resp.Reason = noNul(resp.By), noNul(resp.Reason)
	data, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encoding the answer to approval request %s: %w", resp.ID, err)
	}
	// One statement: the request must exist (and, for a yes, not have
	// lapsed), and the key keeps the first answer of any two racing (a
	// person and the timeout). Answered already by the timeout, or lapsed,
	// is "expired".
	var state string
	err = s.db.pool.QueryRow(ctx, `WITH q AS (
			SELECT `+lapsedAfter(7)+` AS lapsed FROM approval_requests q WHERE q.tenant = $1 AND q.session_id = $2 AND q.id = $3),
		ins AS (
			INSERT INTO approval_responses (tenant, session_id, id, at, approve, response)
			SELECT $1, $2, $3, $4, $5, $6 FROM q WHERE NOT ($5 AND q.lapsed)
			ON CONFLICT DO NOTHING RETURNING 1),
		stands AS (
			SELECT r.response->>'by' AS by FROM approval_responses r WHERE r.tenant = $1 AND r.session_id = $2 AND r.id = $3)
		SELECT CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 'answered'
			WHEN NOT EXISTS (SELECT 1 FROM q) THEN 'none'
			WHEN EXISTS (SELECT 1 FROM stands WHERE by = ANY($8)) THEN 'expired'
			WHEN EXISTS (SELECT 1 FROM stands) THEN 'already'
			WHEN (SELECT lapsed FROM q) AND $5 THEN 'expired'
			ELSE 'already' END`, s.tenant, id, resp.ID, resp.At, resp.Approve, data, skewSeconds, []string{permissions.ByTimeout, permissions.ByStepEnded}).Scan(&state)
	if err != nil {
		return fmt.Errorf("storing the answer to approval request %s of session %q: %w", resp.ID, id, err)
	}
	switch state {
	case "none":
		return fmt.Errorf("%w: %s in session %s", permissions.ErrNoRequest, resp.ID, id)
	case "already":
		// The answer standing is committed, and may be this one's: a
		// retry after a commit whose answer was lost finds it here, its
		// NOTIFY never sent. Told again, as a landing found on its retry
		// is; another's answer heard twice costs a watcher one read.
		s.notifyCommitted(ctx, id, coordination.Change{Permissions: true})
		return fmt.Errorf("%w: %s", permissions.ErrAnswered, resp.ID)
	case "expired":
		return fmt.Errorf("approval request %s: %w", resp.ID, permissions.ErrExpired)
	}
	s.notifyCommitted(ctx, id, coordination.Change{Permissions: true})
	return nil
}

// ExpireApprovals refuses, in their askers' stead, the session's requests
// that have lapsed (lapsedAfter) with no answer, by
// permissions.ByTimeout for permissions.AskerGone, appends refusal(r) of
// each to the permission log in the same statement, and returns those it
// refused (the first answer stands, so each is returned and recorded
// once). One statement, so both land or neither: left to the caller, a
// refusal committed with its answer lost was never recorded, and no later
// call returned it again.
//
// The lapsed requests are read first, so their records can be made: none,
// the common case, costs that one round trip, as it did before.
func (s *Store) ExpireApprovals(ctx context.Context, id string, refusal func(permissions.ApprovalRequest) permissions.Record) ([]permissions.ApprovalRequest, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT q.request FROM approval_requests q
		WHERE q.tenant = $1 AND q.session_id = $2 AND `+lapsedAfter(3)+` AND NOT EXISTS (
			SELECT 1 FROM approval_responses r WHERE r.tenant = q.tenant AND r.session_id = q.session_id AND r.id = q.id)
		ORDER BY q.asked_at, q.id`, s.tenant, id, skewSeconds)
	if err != nil {
		return nil, fmt.Errorf("reading the lapsed approval requests of session %q: %w", id, err)
	}
	lapsed, err := collectJSON[permissions.ApprovalRequest](rows)
	if err != nil || len(lapsed) == 0 {
		if err != nil {
			err = fmt.Errorf("reading the lapsed approval requests of session %q: %w", id, err)
		}
		return nil, err
	}
	// Each row's answer is this one with its own id.
	answer, err := json.Marshal(permissions.ApprovalResponse{By: permissions.ByTimeout, Reason: permissions.AskerGone, At: ms(time.Now())})
	if err != nil {
		return nil, fmt.Errorf("encoding the refusal of a lapsed approval request: %w", err)
	}
	n := len(lapsed)
	ids, ats, agents, outcomes, records := make([]string, n), make([]time.Time, n), make([]string, n), make([]string, n), make([]string, n)
	for i, r := range lapsed {
		rec := refusal(r)
		rec.Time = ms(rec.Time)
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("encoding the refusal of approval request %s of session %q: %w", r.ID, id, err)
		}
		ids[i], ats[i], agents[i], outcomes[i], records[i] = r.ID, rec.Time, rec.Agent, string(rec.Outcome), string(data)
	}
	// Refused again under the same conditions: another reader may have
	// refused one since, or its late asker, and the key keeps the first.
	// Only the rows this statement inserted are recorded.
	rows, err = s.db.pool.Query(ctx, `WITH ins AS (
			INSERT INTO approval_responses (tenant, session_id, id, at, approve, response)
			SELECT q.tenant, q.session_id, q.id, now(), false, ($4::jsonb || jsonb_build_object('id', q.id))::json
			FROM approval_requests q
			WHERE q.tenant = $1 AND q.session_id = $2 AND q.id = ANY($3) AND `+lapsedAfter(5)+` AND NOT EXISTS (
				SELECT 1 FROM approval_responses r WHERE r.tenant = q.tenant AND r.session_id = q.session_id AND r.id = q.id)
			ON CONFLICT DO NOTHING RETURNING id),
		logged AS (
			INSERT INTO permission_log (tenant, session_id, at, agent_id, outcome, record)
			SELECT $1, $2, c.at, c.agent, c.outcome, c.record::json
			FROM unnest($3::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS c(id, at, agent, outcome, record, i)
			JOIN ins ON ins.id = c.id ORDER BY c.i)
		SELECT q.request FROM approval_requests q JOIN ins ON ins.id = q.id
		WHERE q.tenant = $1 AND q.session_id = $2 ORDER BY q.asked_at, q.id`,
		s.tenant, id, ids, answer, skewSeconds, ats, agents, outcomes, records)
	if err != nil {
		s.inDoubt(id, err, doubtedRecords(ats, records))
		return nil, fmt.Errorf("refusing the lapsed approval requests of session %q: %w", id, err)
	}
	reqs, err := collectJSON[permissions.ApprovalRequest](rows)
	if err != nil {
		s.inDoubt(id, err, doubtedRecords(ats, records))
		return nil, fmt.Errorf("refusing the lapsed approval requests of session %q: %w", id, err)
	}
	if len(reqs) > 0 {
		s.notifyCommitted(ctx, id, coordination.Change{Permissions: true})
	}
	return reqs, nil
}

// doubtedRecords is an expiry's records as it sent them, kept in doubt
// when its answer is lost: it logs only the refusals it made, so any one
// found tells it committed.
func doubtedRecords(ats []time.Time, texts []string) []doubtedRecord {
	rs := make([]doubtedRecord, len(ats))
	for i := range ats {
		rs[i] = doubtedRecord{at: ats[i], text: texts[i]}
	}
	return rs
}

// PendingApprovals lists the requests with no answer whose asker still
// waits (not lapsed), oldest first.
func (s *Store) PendingApprovals(ctx context.Context, id string) ([]permissions.ApprovalRequest, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT q.request FROM approval_requests q
		WHERE q.tenant = $1 AND q.session_id = $2 AND NOT `+lapsedAfter(3)+` AND NOT EXISTS (
			SELECT 1 FROM approval_responses r WHERE r.tenant = q.tenant AND r.session_id = q.session_id AND r.id = q.id)
		ORDER BY q.asked_at, q.id`, s.tenant, id, skewSeconds)
	if err != nil {
		return nil, fmt.Errorf("reading the pending approvals of session %q: %w", id, err)
	}
	reqs, err := collectJSON[permissions.ApprovalRequest](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the pending approvals of session %q: %w", id, err)
	}
	return reqs, nil
}
