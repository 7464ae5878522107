package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.SpendHoldStore = (*Store)(nil)

// HoldSpend implements coordination.SpendHoldStore: it writes key's hold
// (migrations/0025_spend_holds.sql) in a statement of its own, committed,
// and only then reads the session's spend (holdRead). Two statements, two
// round trips, on purpose: in one, each replica's snapshot would miss the
// other's hold not yet committed, and two calls checked at once could
// both pass; written first, whichever reads second sees the other's.
// A criteria call makes one per attempt, a few a session.
func (s *Store) HoldSpend(ctx context.Context, id, key string, cost float64, tokens int64, ttl time.Duration) (coordination.HeldSpend, error) {
	var out coordination.HeldSpend
	if err := live(ctx, id); err != nil {
		return out, err
	}
	if _, err := s.db.pool.Exec(ctx, holdWrite, s.tenant, id, key, cost, tokens, ttl.Milliseconds()); err != nil {
		return out, fmt.Errorf("holding $%.4f and %d tokens of session %q's budget on every replica: %w", cost, tokens, id, err)
	}
	err := s.db.pool.QueryRow(ctx, holdRead, s.tenant, id, key).Scan(&out.SpentCost, &out.SpentTokens, &out.HeldCost, &out.HeldTokens)
	if err != nil {
		return out, fmt.Errorf("reading session %q's spend on every replica: %w", id, err)
	}
	return out, nil
}

// LetGoSpend implements coordination.SpendHoldStore.
func (s *Store) LetGoSpend(ctx context.Context, id, key string) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	if _, err := s.db.pool.Exec(ctx, holdGone, s.tenant, id, key); err != nil {
		return fmt.Errorf("letting go of a hold on session %q's budget: %w", id, err)
	}
	return nil
}

// holdGone deletes key's ($3) hold, and the session's holds past their
// expiry (holders that died): they count for nothing, and in the same
// statement their rows cost no round trip of their own.
const holdGone = `DELETE FROM spend_holds WHERE tenant = $1 AND session_id = $2 AND (holder = $3 OR expires_at <= now())`

// holdWrite keeps a hold ($4 dollars, $5 tokens) under its key ($3) until
// $6 milliseconds from now, by the database's clock. The session's other
// holds past their expiry go in the same statement (expired): a holder
// that died leaves its row, which counts for nothing after its expiry and
// was kept until the session was deleted. Its own key is left to the
// upsert, which one statement cannot both delete and update.
const holdWrite = `WITH expired AS (
			DELETE FROM spend_holds WHERE tenant = $1 AND session_id = $2 AND holder <> $3 AND expires_at <= now())
		INSERT INTO spend_holds (tenant, session_id, holder, cost_usd, tokens, expires_at)
		VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond')
		ON CONFLICT (tenant, session_id, holder) DO UPDATE
			SET cost_usd = EXCLUDED.cost_usd, tokens = EXCLUDED.tokens, expires_at = EXCLUDED.expires_at`

// holdRead is the session's spend as a share counts it (spendShare: the
// usage rows, every step row's spend and inheritance, the kept spend no
// row counts), and apart the holds of the other keys ($3) not expired.
const holdRead = `WITH holdlanded AS (
			SELECT coalesce(sum(coalesce(cost_usd, 0)), 0) AS cost, coalesce(sum(input_tokens + output_tokens), 0) AS tokens
			FROM usage WHERE tenant = $1 AND session_id = $2),
		flying AS (
			SELECT coalesce(sum(spent_cost + dead.cost), 0) AS cost, coalesce(sum(spent_tokens + dead.tokens), 0) AS tokens
			FROM locks, LATERAL (` + inheritedSum + `) AS dead
			WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%'),
		orphaned AS (
			SELECT coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(tokens), 0) AS tokens
			FROM shared_spend d WHERE d.tenant = $1 AND d.session_id = $2 AND ` + spendOrphaned + `),
		held AS (
			SELECT coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(tokens), 0) AS tokens
			FROM spend_holds WHERE tenant = $1 AND session_id = $2 AND holder <> $3 AND expires_at > now())
		SELECT holdlanded.cost + flying.cost + orphaned.cost, (holdlanded.tokens + flying.tokens + orphaned.tokens)::bigint,
			held.cost, held.tokens::bigint
		FROM holdlanded, flying, orphaned, held`
