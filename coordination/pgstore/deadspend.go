package pgstore

import (
	"context"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.DeadSpendStore = (*Store)(nil)

// deadSpendTake does to every step lock row of the session whose holder
// ran out with spend shared on it what a take of it does (lockTaking): the
// spend moves into inherited under the holder's token, and the row is left
// holderless, as massgen_let_go leaves a row with inherited spend (an
// empty token, expired, nobody's to renew or land under: massgen_hold_lock
// finds another holder's row and refuses the late landing). A row ran out only
// past its expiry and, in an outage that excuses its holder, past $3
// (DB.lockTakeover), the take's own rule. A row with no spend of its own is
// left to its agent's next take. Every right-hand side reads the row as it
// was: the key is the holder's token. It then lists what every step lock
// row of the session inherited, by agent and key: the fenced rows as the
// update left them, the others as they are. One statement, one snapshot:
// a record that takes a key off meanwhile (sessionSpendRecorded) is seen
// by both parts or neither; and one round trip, made at every run's start
// and every session's end, where a transaction took four.
var deadSpendTake = `WITH fenced AS (
			UPDATE locks SET token = '', expires_at = '-infinity', spent_cost = 0, spent_tokens = 0,
				inherited = ` + spendInherited + `
			WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND token <> ''
				AND ` + ranOut("$3") + `
				AND (spent_cost <> 0 OR spent_tokens <> 0)
			RETURNING name, inherited),
		steprows AS (
			SELECT name, inherited FROM fenced
			UNION ALL
			SELECT name, inherited FROM locks
			WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND name NOT IN (SELECT name FROM fenced))
		SELECT substr(name, 6), e.k, (e.v->>0)::float8, (e.v->>1)::bigint
		FROM steprows, jsonb_each(inherited) AS e(k, v)
		ORDER BY 1, 2`

// TakeDeadSpend implements coordination.DeadSpendStore (deadSpendTake).
func (s *Store) TakeDeadSpend(ctx context.Context, id string) ([]coordination.DeadSpend, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, deadSpendTake, s.tenant, id, s.db.lockTakeover())
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
	return out, nil
}
