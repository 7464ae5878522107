package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var (
	_ coordination.DeadSpendStore = (*Store)(nil)
	_ coordination.HeldSpendStore = (*Store)(nil)
)

// deadSpendTake does to every step lock row of the session whose holder
// ran out with spend shared on it what a take of it does (lockTaking): the
// spend moves into inherited under the holder's token, and the row is left
// holderless, as massgen_let_go leaves a row with inherited spend (an
// empty token, expired, nobody's to renew or land under: massgen_hold_lock
// finds another holder's row and refuses the late landing). A row ran out only
// past its expiry and, in an outage that excuses its holder, past $3
// (DB.lockTakeover), the take's own rule. A row with no spend of its own is
// left to its agent's next take. Every right-hand side reads the row as it
// was: the key is the holder's token.
//
// It then does the same to the spend a crash left in shared_spend with no
// lock row counting it (spendOrphaned; migrations/0018_shared_spend.sql):
// each such key goes into its agent's step row's inherited spend (a row
// made holderless and expired if the crash took it, the row as it is if a
// step holds it again), so the holder, if it was only cut off, finds
// another holder's row and lands nothing, and the key counts there until
// recorded. A crash took every lock row, so the row's expiry, which said
// whether its holder was alive, is gone too; such a key is a dead holder's
// once no outage excuses holders any more ($3 NULL: the database has
// answered for a lock's TTL since the outage this replica saw, or since
// the restart it read at Open, restartseen.go), so that a live holder has
// had a TTL of heartbeats to put its row back (DB.renew, with its spend),
// and once its last share is a TTL old ($4), as its lost row's expiry was
// at the earliest. A key whose agent's row this statement fences is listed
// without moving (a row is updated once a statement): that row, holderless,
// fences its holder all the same, and the key counts where it is, in
// shared_spend, until recorded.
//
// It lists what every step lock row of the session inherited, by agent
// and key: the fenced rows as the update left them, the others as they
// are, and the keys left where they are. One statement, one snapshot: a
// record that takes a key off meanwhile (sessionSpendRecorded) is seen by
// every part or none; and one round trip, made at every run's start,
// every session's end and every landing of a budgeted step-driven
// session, where a transaction took four.
//
// The adoption reads its orphans in the statement's snapshot, but meets
// the rows committed since as it inserts: a holder's row the heartbeat put
// back meanwhile (DB.renew, its kept spend on it) is the holder's own key
// come back, counted on the row: the conflict merges the agent's other
// orphaned keys into it but not that one, so it is neither counted twice
// nor listed. A holder that
// landed in that same instant (its kept row deleted, its lock row let go)
// is not seen: its key is listed from the snapshot and recorded beside the
// landing. That needs a holder alive but unheard for a lock's TTL after
// the database came back, landing within the take's statement; it is left.
var deadSpendTake = `WITH fenced AS (
			UPDATE locks SET token = '', expires_at = '-infinity', spent_cost = 0, spent_tokens = 0,
				inherited = ` + spendInherited + `
			WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND token <> ''
				AND ` + ranOut("$3") + `
				AND (spent_cost <> 0 OR spent_tokens <> 0)
			RETURNING name, inherited),
		orphans AS (
			SELECT 'step:' || d.agent_id AS name, d.spender, d.cost_usd, d.tokens FROM shared_spend d
			WHERE d.tenant = $1 AND d.session_id = $2 AND ` + spendOrphaned + `
				AND $3::timestamptz IS NULL AND d.reported_at < now() - $4 * interval '1 millisecond'),
		adopted AS (
			INSERT INTO locks (tenant, session_id, name, token, expires_at, inherited)
			SELECT $1, $2, name, '', '-infinity', jsonb_object_agg(spender, jsonb_build_array(cost_usd, tokens))
			FROM orphans WHERE name NOT IN (SELECT name FROM fenced) GROUP BY name
			ON CONFLICT (tenant, session_id, name) DO UPDATE SET inherited = locks.inherited || (EXCLUDED.inherited - locks.token)
			RETURNING name, inherited),
		steprows AS (
			SELECT name, inherited FROM fenced
			UNION ALL
			SELECT name, inherited FROM adopted
			UNION ALL
			SELECT name, inherited FROM locks
			WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%'
				AND name NOT IN (SELECT name FROM fenced) AND name NOT IN (SELECT name FROM adopted)),
		listed AS (
			SELECT substr(name, 6) AS agent, e.k AS key, (e.v->>0)::float8 AS cost, (e.v->>1)::bigint AS tokens
			FROM steprows, jsonb_each(inherited) AS e(k, v)
			UNION ALL
			SELECT substr(name, 6), spender, cost_usd, tokens FROM orphans WHERE name IN (SELECT name FROM fenced))
		SELECT agent, key, cost, tokens FROM listed
		ORDER BY 1, 2`

// TakeDeadSpend implements coordination.DeadSpendStore (deadSpendTake).
func (s *Store) TakeDeadSpend(ctx context.Context, id string) ([]coordination.DeadSpend, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	// The take runs its kept generic plan (keepGenericPlans), which finds
	// its rows by key (TestTheDeadSpendTakeLooksUpItsRowsByKey), where
	// PostgreSQL made a custom plan, 2 ms of planning, at each
	// connection's first five calls: at 200 sessions most of its calls.
	// One round trip still, the batch an implicit transaction.
	b := &pgx.Batch{}
	b.Queue(keepGenericPlans)
	b.Queue(deadSpendTake, s.tenant, id, s.db.lockTakeover(), lockTTL.Milliseconds())
	br := s.db.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("taking the spend of session %q's step locks whose holders stopped answering: %w", id, err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("taking the spend of session %q's step locks whose holders stopped answering: %w", id, err)
	}
	defer rows.Close()
	var out []coordination.DeadSpend
	for rows.Next() {
		var d coordination.DeadSpend
		if err := rows.Scan(&d.Agent, &d.Key, &d.CostUSD, &d.Tokens); err != nil {
			return nil, fmt.Errorf("taking the spend of session %q's step locks whose holders stopped answering: %w", id, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("taking the spend of session %q's step locks whose holders stopped answering: %w", id, err)
	}
	// The commit's own answer comes with the batch's end.
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("taking the spend of session %q's step locks whose holders stopped answering: %w", id, err)
	}
	return out, nil
}

// heldSpendRunsOut is, in seconds, how long until the session's held step
// lock rows that carry spend are past their expiry. A row past it that an
// outage still excuses (deadSpendTake's ranOut) is not counted: it runs
// out when the excuse ends, not at a time the row holds, and a wait for
// it would only poll.
const heldSpendRunsOut = `SELECT coalesce(extract(epoch FROM max(locks.expires_at) - now()), 0)::float8
		FROM locks
		WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND token <> ''
			AND (spent_cost <> 0 OR spent_tokens <> 0)
			AND locks.expires_at > now()`

// HeldSpendRunsOut implements coordination.HeldSpendStore
// (heldSpendRunsOut).
func (s *Store) HeldSpendRunsOut(ctx context.Context, id string) (time.Duration, error) {
	if err := live(ctx, id); err != nil {
		return 0, err
	}
	var secs float64
	if err := s.db.pool.QueryRow(ctx, heldSpendRunsOut, s.tenant, id).Scan(&secs); err != nil {
		return 0, fmt.Errorf("reading when session %q's step locks holding spend run out: %w", id, err)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
