package pgstore

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.SpendRecordedStore = (*Store)(nil)

// ShareSpend implements coordination.SpendSharingStepLock: it keeps the
// step's spend so far on its lock's row and reads, in the same statement,
// the session's whole spend: every usage row (each landed step's and each
// usage entry's, which is the ledger's spend) and every step lock row of
// the session, this one's as just written. A landing deletes its lock's row
// in the transaction that writes its usage, so no step is counted twice or
// missed between the two.
//
// Every step row counts, expired ones included, with what it inherited: a
// replica that died with a step in flight spent what it last wrote, and its
// agent's next step takes the row over with no spend of its own, the dead
// spend inherited (stepLockTake) until the usage entry recording it takes
// it off (sessionSpendRecorded). Tokens are input plus output, as
// providers.Usage.Tokens counts them; an unknown cost counts as zero, as
// the budget check at landing counts it.
//
// The same statement keeps the spend in shared_spend, a logged table
// (migrations/0018_shared_spend.sql), so a database crash, which empties
// the unlogged locks, does not lose a dead step's spend: no round trip
// more, and a step that never shares pays nothing for it. The lock
// remembers that it shared, so that its landing and its letting go take
// that row away with the lock row's spend (spendKeptGone).
func (l *stepLock) ShareSpend(ctx context.Context, cost float64, tokens int64) (float64, int64, error) {
	// Marked before the share is sent. A share is sent under the step's
	// call context, which the step ends (whileSure, boundBySession)
	// before it lands and reads the mark, and the pool refuses a context
	// that ended: no share is sent after the landing read it unmarked.
	l.shared.Store(true)
	var allCost float64
	var allTokens int64
	err := l.s.db.pool.QueryRow(ctx, spendShare, l.s.tenant, l.id, "step:"+l.agent, l.token, cost, tokens).Scan(&allCost, &allTokens)
	if err != nil {
		return 0, 0, fmt.Errorf("sharing the spend of %s's step %d in session %q with the other replicas: %w", l.agent, l.step, l.id, err)
	}
	return allCost, allTokens, nil
}

// spendShare writes a step's spend on its lock row ($5, $6), and in
// shared_spend under its key ($4) while that row is still the holder's
// (spendkept: a holder whose row was taken over or lost writes no row
// that would outlive its lock's), and sums the session's: the usage rows,
// the other step rows' spend, this step's own, every step row's inherited
// spend, this one's too, and the spend kept for keys no step row counts
// (spendOrphaned), and what the calls made outside the steps hold on any
// replica (held: spend_holds, HoldSpend), a criteria call's worst case
// counted as spent while it is out. Its CTE is named apart so a count of round trips by
// their SQL (QueryCounts) tells it from the others. It commits without
// waiting for the WAL flush (sharecfg), as the lock takes do: the kept row
// is logged, and a commit that waited for the flush (milliseconds, tens
// under load) made every share later for the other replicas' checks, one
// at a time beside the turns, and let two looping CLI steps on two
// replicas spend past the budget by more than two turns each. A crash
// forgets at most the last fraction of a second of shares, the earlier
// ones of the same key kept.
const spendShare = `WITH spendmine AS (
			UPDATE locks SET spent_cost = $5, spent_tokens = $6
			WHERE tenant = $1 AND session_id = $2 AND name = $3 AND token = $4 RETURNING 1),
		sharecfg AS (SELECT set_config('synchronous_commit', 'off', true)),
		spendkept AS (
			INSERT INTO shared_spend (tenant, session_id, spender, agent_id, cost_usd, tokens, reported_at)
			SELECT $1, $2, $4, substr($3, 6), $5, $6, now() FROM spendmine WHERE $5 <> 0 OR $6 <> 0
			ON CONFLICT (tenant, session_id, spender) DO UPDATE
				SET cost_usd = EXCLUDED.cost_usd, tokens = EXCLUDED.tokens, reported_at = EXCLUDED.reported_at
			RETURNING 1),
		landed AS (
			SELECT coalesce(sum(coalesce(cost_usd, 0)), 0) AS cost, coalesce(sum(input_tokens + output_tokens), 0) AS tokens
			FROM usage WHERE tenant = $1 AND session_id = $2),
		flying AS (
			SELECT coalesce(sum(CASE WHEN token = $4 THEN 0 ELSE spent_cost END + dead.cost), 0) AS cost,
				coalesce(sum(CASE WHEN token = $4 THEN 0 ELSE spent_tokens END + dead.tokens), 0) AS tokens
			FROM locks, LATERAL (` + inheritedSum + `) AS dead
			WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%'),
		orphaned AS (
			SELECT coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(tokens), 0) AS tokens
			FROM shared_spend d WHERE d.tenant = $1 AND d.session_id = $2 AND d.spender <> $4 AND ` + spendOrphaned + `),
		held AS (
			SELECT coalesce(sum(cost_usd), 0) AS cost, coalesce(sum(tokens), 0) AS tokens
			FROM spend_holds WHERE tenant = $1 AND session_id = $2 AND expires_at > now())
		SELECT landed.cost + flying.cost + orphaned.cost + held.cost + $5, (landed.tokens + flying.tokens + orphaned.tokens + held.tokens + $6)::bigint
		FROM landed, flying, orphaned, held, sharecfg, (SELECT count(*) FROM spendmine) AS written, (SELECT count(*) FROM spendkept) AS kept`

// spendOrphaned is the condition on a shared_spend row d that no step lock
// row of its session counts its key: neither held under it (its own spend,
// counted on the row) nor inherited it. Only a crash (or a failover) that
// emptied the locks leaves such a row: the spend of a holder that shared it
// before, dead or still to put its row back (DB.renew). It counts apart,
// so a step's spend is counted once whatever the locks table lost; this
// step's own key counts as $5 (its row may be one the crash took).
const spendOrphaned = `NOT EXISTS (SELECT 1 FROM locks l
				WHERE l.tenant = d.tenant AND l.session_id = d.session_id AND l.name LIKE 'step:%'
					AND (l.token = d.spender OR l.inherited ? d.spender))`

// inheritedSum is a lock row's inherited spend, cost and tokens, summed
// over its keys (migrations/0016_inherited_spend.sql).
const inheritedSum = `SELECT coalesce(sum((v->>0)::float8), 0) AS cost, coalesce(sum((v->>1)::bigint), 0) AS tokens
				FROM jsonb_each(inherited) AS e(k, v)`

// inherited is a lock row's inherited spend as stepLockTake returns it:
// each key (a dead holder's token) to its [cost, tokens].
type inherited map[string][2]float64

// spends lists i by key, for the taker to record.
func (i inherited) spends() []coordination.InheritedSpend {
	out := make([]coordination.InheritedSpend, 0, len(i))
	for _, k := range slices.Sorted(maps.Keys(i)) {
		out = append(out, coordination.InheritedSpend{Key: k, CostUSD: i[k][0], Tokens: int64(i[k][1])})
	}
	return out
}

// sessionSpendRecorded goes with a session usage entry recorded under a
// spend key ($3, SessionEntry.Spender), in its transaction: the key's
// spend, now in the ledger, is no longer counted on a step lock's row. A
// row that inherited it loses it; a row still held under it (its holder
// recording its own step's whole spend, a cancelled call) has its own
// spend cleared, so a take that comes after finds nothing to inherit. A
// take that commits first moved the spend into inherited, where this,
// waiting on the row, finds it. Either way the key is never left counted
// beside its record, nor taken off before it. The key's row in
// shared_spend goes in the same statement (spendgone), so a crash after
// the record leaves nothing of it to record again, and one before it
// leaves the row to be found dead. A criteria call's hold under the key
// (spend_holds, HoldSpend) goes in it too (holdgone): its spend is in the
// ledger now, so no replica counts it both there and held, nor goes on
// counting the hold when the holder's let-go after the record is lost.
const sessionSpendRecorded = `WITH spendgone AS (
			DELETE FROM shared_spend WHERE tenant = $1 AND session_id = $2 AND spender = $3::text),
		holdgone AS (
			DELETE FROM spend_holds WHERE tenant = $1 AND session_id = $2 AND holder = $3::text)
		UPDATE locks SET inherited = inherited - $3::text,
			spent_cost = CASE WHEN token = $3 THEN 0 ELSE spent_cost END,
			spent_tokens = CASE WHEN token = $3 THEN 0 ELSE spent_tokens END
		WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND (token = $3 OR inherited ? $3)`

// holderlessGone deletes the step rows let go with inherited spend
// (massgen_let_go) once nothing of it is left to count: a statement of its
// own after sessionSpendRecorded, so it sees that one's update.
const holderlessGone = `DELETE FROM locks WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND token = '' AND inherited = '{}'`

// SpendRecorded implements coordination.SpendRecordedStore: what a usage
// entry under key does to the step lock rows, without the entry.
func (s *Store) SpendRecorded(ctx context.Context, id, key string) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sessionSpendRecorded, s.tenant, id, key); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, holderlessGone, s.tenant, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("taking a recorded spend off session %q's step locks: %w", id, err)
	}
	return nil
}

// SpendKey implements coordination.SpendSharingStepLock: the lock's token,
// which its spend is shared under.
func (l *stepLock) SpendKey() string { return l.token }

// TakenOverSpend implements coordination.SpendSharingStepLock.
func (l *stepLock) TakenOverSpend() []coordination.InheritedSpend { return l.dead.spends() }
