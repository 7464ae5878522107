package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A server step takes its step lock and claims its step lease back to back
// (coordination.StepLockWithLease): the claim goes in the lock's batch, one
// round trip where there were two. It is the claim's one-round-trip path
// (leases.go), the known row's compare-all-columns UPDATE or, for a row
// not known, the insert where there is none, each written only while the
// batch's own take holds the lock row: a take refused (a live holder, no
// session) claims nothing. Whatever would refuse the claim, or need the
// row read first, is left to AcquireStep after the lock, which decides it
// as before: a known row the rule refuses (it may be stale), a takeover of
// an abandoned try (its release, were the agent not due, would end the
// try's run of claims), or one that moved on (the UPDATE lands nothing),
// or another's row where the insert found one.

var _ coordination.StepLockWithLease = (*Store)(nil)

// claimFold is a step lease's claim sent in its lock's batch: next over
// the known row cur (known), or inserted where there is none.
type claimFold struct {
	known     bool
	cur, next coordination.RunLease
	claimed   bool // the write landed (in a transaction that may yet fail)
}

// LockStepWithLease takes the agent's step lock and, in the same round
// trip, claims its step lease when the claim is the one-round-trip kind
// (coordination.StepLockWithLease); the lease is nil when it claimed none.
func (s *Store) LockStepWithLease(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.StepLock, *coordination.RunLease, error) {
	if err := coordination.CheckAgentID(agent); err != nil {
		return nil, nil, err
	}
	// lockStep's own checks, here first: a take refused before it is sent
	// names no claim to take back.
	if err := live(ctx, id); err != nil {
		return nil, nil, err
	}
	fold := s.claimFoldOf(ctx, id, agent, owner, ttl)
	lock, err := s.lockStep(ctx, id, agent, fold)
	switch {
	case errors.Is(err, errNotSent):
		// Given up before it was sent: no claim to take back, and the
		// row known is as it was.
		return nil, nil, err
	case err != nil && fold != nil && !refusedTake(err):
		// Perhaps sent, and not known to have landed or not: the row is
		// known no more, and the claim is named for its caller to take
		// back if it did land.
		s.db.written.drop(s.tenant, id, agent)
		sent := asStored(fold.next) // as ReadSteps reads it, for the caller to match
		return nil, &sent, err
	case err != nil:
		return nil, nil, err
	case fold == nil:
		return lock, nil, nil
	case !fold.claimed:
		if fold.known {
			s.db.written.drop(s.tenant, id, agent) // moved on
		}
		return lock, nil, nil
	}
	s.db.written.put(s.tenant, id, agent, fold.next)
	return lock, &fold.next, nil
}

// refusedTake tells a step lock's take refused before anything was
// written: a live holder, no such session.
func refusedTake(err error) bool {
	return errors.Is(err, coordination.ErrAgentBusy) || errors.Is(err, coordination.ErrSessionNotFound)
}

// excusedChange is change with its rule applied to the row as a reader
// sees it: another process's lease an outage excuses reads held (excuse),
// so its holder keeps it. Every claim's (claim, claimFoldOf).
func (s *Store) excusedChange(change coordination.LeaseChange, owner coordination.LeaseOwner) coordination.LeaseChange {
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		return change(ctx, id, agent, func(cur *coordination.RunLease) (coordination.RunLease, error) {
			// Never the claimant's own: it holds the step or run lock, so
			// nothing of its own runs under the lease, and its next step
			// must not wait out its own lease an outage outlasted.
			if cur != nil && cur.ID != owner.ID {
				seen := *cur
				s.db.excuse(&seen)
				cur = &seen
			}
			return rule(cur)
		})
	}
}

// claimFoldOf is the claim to send with the agent's step lock, nil when
// AcquireStep must decide it: its rule is AcquireStep's (claim), applied
// to the row this replica wrote last, or to none.
func (s *Store) claimFoldOf(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) *claimFold {
	var rule func(cur *coordination.RunLease) (coordination.RunLease, error)
	capture := func(_ context.Context, _, _ string, r func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		rule = r
		return coordination.RunLease{}, nil
	}
	// Claim only hands its rule to capture, which writes nothing.
	_, _ = s.excusedChange(coordination.LeaseChange(capture), owner).Claim(ctx, id, agent, owner, ttl)
	if rule == nil {
		return nil
	}
	f := &claimFold{}
	var cur *coordination.RunLease
	if known, ok := s.db.written.get(s.tenant, id, agent); ok {
		f.known, f.cur, cur = true, known, &known
	}
	next, err := rule(cur)
	if err != nil {
		return nil
	}
	if next.ChainFrom != next.Version {
		// A takeover of an abandoned try (a run of claims carried on) is
		// AcquireStep's, after the due check: claimed here, an agent not
		// due would release it, ending that run, and the dead try would
		// read released, its time and tool calls forgotten.
		return nil
	}
	f.next = next
	return f
}

// queue adds the claim to the lock's batch b (nil: nothing). The take
// turned synchronous_commit off for the batch's transaction (lockTaking);
// a claim must be as durable as AcquireStep's, lest a crash forget it and
// a rival claim the same version, so the claim's statement sets it back
// to the session's own before it writes (durableWith), and the commit
// waits for the flush as AcquireStep's did.
func (f *claimFold) queue(b *pgx.Batch, tenant, id, agent, name, token string) {
	if f == nil {
		return
	}
	if f.known {
		args := changeKnownArgs(tenant, id, agent, f.cur, f.next)
		n := len(args)
		b.Queue(durableWith+changeKnownSQL+` AND `+lockHeldBy("$1", "$2", fmt.Sprintf("$%d", n+1), fmt.Sprintf("$%d", n+2))+durableWhere,
			append(args, name, token)...)
		return
	}
	b.Queue(claimAbsentHeldSQL, append(appendLeaseRow(append(make([]any, 0, 3+leaseRowLen+2), tenant, id, agent), f.next), name, token)...)
}

// durableWith and durableWhere make a claim's statement set
// synchronous_commit back to the session's own (its reset value: set_config
// given NULL is RESET) for the rest of the transaction before it writes: a
// row it writes passed the condition durableWhere adds, which runs the
// set_config (a CTE runs only where it is read). A statement of its own
// before, run once more per step; and before that it read pg_settings'
// reset_val, a view that builds a row for every one of the server's
// settings with its description translated (12 % of all CPU time in the
// 1,000-session benchmark).
const (
	durableWith  = `WITH durable AS (SELECT set_config('synchronous_commit', NULL, true) AS v) `
	durableWhere = ` AND (SELECT v FROM durable) IS NOT NULL`
)

// read reads the claim's answers from the lock's batch (nil: none).
func (f *claimFold) read(br pgx.BatchResults) error {
	if f == nil {
		return nil
	}
	tag, err := br.Exec()
	if err != nil {
		return fmt.Errorf("claiming a step's lease with its lock: %w", err)
	}
	f.claimed = tag.RowsAffected() == 1
	return nil
}

// lockHeldBy is the condition that the lock row named by the parameters
// tenant, id and name is held by token: the batch's take took it.
func lockHeldBy(tenant, id, name, token string) string {
	return `EXISTS (SELECT 1 FROM locks k WHERE k.tenant = ` + tenant + ` AND k.session_id = ` + id +
		` AND k.name = ` + name + ` AND k.token = ` + token + `)`
}

// claimAbsentHeldSQL is claimAbsentSQL with the session's existence read
// as the lock row's (a take inserts it only for a stored session) held by
// the batch's take ($15, $16).
var claimAbsentHeldSQL = durableWith + `INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released, ran_before_ms, chain_from)
	SELECT $1, $2, $3, $4::text, $5::text, $6::integer, $7::bigint, $8::bigint, $9::timestamptz, $10::timestamptz, $11::timestamptz, $12::boolean, $13::bigint, $14::bigint
	WHERE ` + lockHeldBy("$1", "$2", "$15", "$16") + `
		AND NOT EXISTS (SELECT 1 FROM lease_floors WHERE tenant = $1 AND session_id = $2)` + durableWhere + `
	ON CONFLICT (tenant, session_id, agent_id) DO NOTHING`
