package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.DeadSpendStore = (*Store)(nil)

// deadSpendFence does to every step lock row of the session whose holder
// ran out with spend shared on it what a take of it does (lockTaking): the
// spend moves into inherited under the holder's token, and the row is left
// holderless, as massgen_let_go leaves a row with inherited spend (an
// empty token, expired, nobody's to renew or land under: massgen_hold_lock
// finds another holder's row and refuses the late landing). A row ran out only
// past its expiry and, in an outage that excuses its holder, past $3
// (DB.lockTakeover), the take's own rule. A row with no spend of its own is
// left to its agent's next take. Every right-hand side reads the row as it
// was: the key is the holder's token.
const deadSpendFence = `UPDATE locks SET token = '', expires_at = '-infinity', spent_cost = 0, spent_tokens = 0,
			inherited = inherited || jsonb_build_object(token, jsonb_build_array(spent_cost, spent_tokens))
		WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%' AND token <> ''
			AND expires_at < now() AND ($3::timestamptz IS NULL OR expires_at < $3)
			AND (spent_cost <> 0 OR spent_tokens <> 0)`

// deadSpendList lists what every step lock row of the session inherited,
// by agent and key: a statement after the fence, so it sees the fence's
// rows as it left them.
const deadSpendList = `SELECT substr(name, 6), e.k, (e.v->>0)::float8, (e.v->>1)::bigint
		FROM locks, jsonb_each(inherited) AS e(k, v)
		WHERE tenant = $1 AND session_id = $2 AND name LIKE 'step:%'
		ORDER BY 1, 2`

// TakeDeadSpend implements coordination.DeadSpendStore: the fence and the
// list in one transaction, so a record that takes a key off between them
// (sessionSpendRecorded) is seen by both or neither.
func (s *Store) TakeDeadSpend(ctx context.Context, id string) ([]coordination.DeadSpend, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	var out []coordination.DeadSpend
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, deadSpendFence, s.tenant, id, s.db.lockTakeover()); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, deadSpendList, s.tenant, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d coordination.DeadSpend
			if err := rows.Scan(&d.Agent, &d.Key, &d.CostUSD, &d.Tokens); err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("taking the spend of session %q's step locks whose holders stopped answering: %w", id, err)
	}
	return out, nil
}
