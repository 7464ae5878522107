package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Calls that outlive their request, as rows (migration 0010): the server
// runs such a call detached and returns "running" past its wait; the retry
// may reach another replica, which finds here whether the work runs (and
// waits for it) or has ended (and takes its result), so it is not done and
// paid for twice. Every statement uses the database's clock, so replicas'
// clocks never decide whose claim has lapsed.

var _ coordination.CallBox = (*Store)(nil)

// keepExpired is how long a lapsed row stays before a claim sweeps it.
const keepExpired = time.Hour

// ClaimCall takes call key for holder until ttl from now, unless another
// holder's claim is live or its result is there uncollected (or collected,
// when that holder is seen: the one the caller was waiting on). It returns
// whether the claim is holder's now, whose the call is, and its result once
// the work has ended (nil while it runs). A call nobody has is claimed.
func (s *Store) ClaimCall(ctx context.Context, key, holder, seen string, ttl time.Duration) (mine bool, by string, result []byte, err error) {
	// Not claimed, the row read is the one the INSERT met, as this
	// statement's snapshot has it. A row another transaction inserted or
	// claimed after that snapshot reads as none (mine false, by ""), and
	// the caller looks again: the snapshot's claimable row (lapsed, or
	// collected) is the one the other claim replaced, and its old result
	// must not answer this new call.
	rows, err := s.db.pool.Query(ctx, `WITH claimed AS (
			INSERT INTO calls AS c (tenant, key, holder, expires_at, replica) VALUES ($1, $2, $3, now() + $5 * interval '1 millisecond', $6)
			ON CONFLICT (tenant, key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, result = NULL, collected = false, replica = excluded.replica
				WHERE c.expires_at < now() OR (c.collected AND c.holder <> $4)
			RETURNING holder)
		SELECT true, holder, NULL::json FROM claimed
		UNION ALL
		SELECT false, holder, result FROM calls WHERE tenant = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM claimed)
			AND NOT (expires_at < now() OR (collected AND holder <> $4))`,
		s.tenant, key, holder, seen, ttl.Milliseconds(), s.db.replica.tag)
	if err != nil {
		return false, "", nil, fmt.Errorf("claiming a call in the store: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&mine, &by, &result); err != nil {
			return false, "", nil, fmt.Errorf("claiming a call in the store: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return false, "", nil, fmt.Errorf("claiming a call in the store: %w", err)
	}
	if mine {
		// Rows of calls nobody repeated would stay for ever: a claim,
		// which is rare, sweeps the long lapsed.
		if _, err := s.db.pool.Exec(ctx, `DELETE FROM calls WHERE tenant = $1 AND key <> $2 AND expires_at < now() - $3 * interval '1 millisecond'`,
			s.tenant, key, keepExpired.Milliseconds()); err != nil {
			s.db.log.Warn().Err(err).Msg("could not sweep lapsed calls from the store")
		}
	}
	return mine, by, result, nil
}

// RenewCall extends holder's claim on a running call by ttl from now; it
// tells whether the claim was still holder's.
func (s *Store) RenewCall(ctx context.Context, key, holder string, ttl time.Duration) (bool, error) {
	tag, err := s.db.pool.Exec(ctx, `UPDATE calls SET expires_at = now() + $4 * interval '1 millisecond'
		WHERE tenant = $1 AND key = $2 AND holder = $3 AND result IS NULL`, s.tenant, key, holder, ttl.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("renewing a call's claim in the store: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// KeepCall records the result of holder's call, kept for keep from now.
// A claim lost meanwhile (it lapsed and another holder took the call)
// keeps nothing, and says so.
func (s *Store) KeepCall(ctx context.Context, key, holder string, result []byte, keep time.Duration) error {
	tag, err := s.db.pool.Exec(ctx, `UPDATE calls SET result = $4, expires_at = now() + $5 * interval '1 millisecond'
		WHERE tenant = $1 AND key = $2 AND holder = $3 AND result IS NULL`, s.tenant, key, holder, result, keep.Milliseconds())
	if err != nil {
		return fmt.Errorf("keeping a call's result in the store: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("keeping a call's result in the store: the claim lapsed and another replica took the call")
	}
	return nil
}

// ReleaseCall lets go of holder's claim on a call that ended without a
// result to keep (its request went away, the server is stopping): a
// replica waiting for it claims it next.
func (s *Store) ReleaseCall(ctx context.Context, key, holder string) error {
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM calls WHERE tenant = $1 AND key = $2 AND holder = $3 AND result IS NULL`,
		s.tenant, key, holder); err != nil {
		return fmt.Errorf("releasing a call's claim in the store: %w", err)
	}
	return nil
}

// CollectCall marks holder's result returned: a new call of the same
// arguments is new work, while a caller that was waiting on holder still
// gets it (ClaimCall's seen).
func (s *Store) CollectCall(ctx context.Context, key, holder string) error {
	if _, err := s.db.pool.Exec(ctx, `UPDATE calls SET collected = true WHERE tenant = $1 AND key = $2 AND holder = $3`,
		s.tenant, key, holder); err != nil {
		return fmt.Errorf("marking a call's result collected in the store: %w", err)
	}
	return nil
}
