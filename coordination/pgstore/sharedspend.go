package pgstore

import (
	"context"
	"fmt"
)

// ShareSpend implements coordination.SpendSharingStepLock: it keeps the
// step's spend so far on its lock's row and reads, in the same statement,
// the session's whole spend: every usage row (each landed step's and each
// usage entry's, which is the ledger's spend) and every step lock row of
// the session, this one's as just written. A landing deletes its lock's row
// in the transaction that writes its usage, so no step is counted twice or
// missed between the two.
//
// Every step row counts, expired ones included: a replica that died with a
// step in flight spent what it last wrote, and its agent's next step takes
// the row over with no spend and records what it found (stepLockTake,
// TakenOverSpend). Tokens are input plus output, as
// providers.Usage.Tokens counts them; an unknown cost counts as zero, as
// the budget check at landing counts it.
func (l *stepLock) ShareSpend(ctx context.Context, cost float64, tokens int64) (float64, int64, error) {
	var allCost float64
	var allTokens int64
	err := l.s.db.pool.QueryRow(ctx, spendShare, l.s.tenant, l.id, "step:"+l.agent, l.token, cost, tokens).Scan(&allCost, &allTokens)
	if err != nil {
		return 0, 0, fmt.Errorf("sharing the spend of %s's step %d in session %q with the other replicas: %w", l.agent, l.step, l.id, err)
	}
	return allCost, allTokens, nil
}

// spendShare writes a step's spend on its lock row ($3, $4) and sums the
// session's: the usage rows, the other step rows, and this step's own.
// Its CTE is named apart so a count of round trips by their SQL
// (QueryCounts) tells it from the others.
const spendShare = `WITH spendmine AS (
			UPDATE locks SET spent_cost = $5, spent_tokens = $6
			WHERE tenant = $1 AND session_id = $2 AND name = $3 AND token = $4 RETURNING 1),
		landed AS (
			SELECT coalesce(sum(coalesce(cost_usd, 0)), 0) AS cost, coalesce(sum(input_tokens + output_tokens), 0) AS tokens
			FROM usage WHERE tenant = $1 AND session_id = $2),
		flying AS (
			SELECT coalesce(sum(spent_cost), 0) AS cost, coalesce(sum(spent_tokens), 0) AS tokens
			FROM locks WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND token <> $4)
		SELECT landed.cost + flying.cost + $5, (landed.tokens + flying.tokens + $6)::bigint
		FROM landed, flying, (SELECT count(*) FROM spendmine) AS written`

// takenOver is the spend a step lock's row carried when the lock took it
// over from a holder that stopped renewing it, and the key it was shared
// under (the holder's token).
type takenOver struct {
	cost   float64
	tokens int64
	key    string
}

// SpendKey implements coordination.SpendSharingStepLock: the lock's token,
// which its spend is shared under.
func (l *stepLock) SpendKey() string { return l.token }

// TakenOverSpend implements coordination.SpendSharingStepLock.
func (l *stepLock) TakenOverSpend() (float64, int64, string) {
	return l.dead.cost, l.dead.tokens, l.dead.key
}
