package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A session lock's take and let-go are a transaction each, and at a
// thousand sessions a step's share of them was about half its round
// trips (a round's landings queue on the lock, which passes on within a
// process, sessionlock.go). As step lock takes are (steptakes.go), the
// takes made while one is in flight go together in the next, from any
// session and tenant of the replica, and so do the let-gos: each group one
// statement, one transaction (group.go). A group of one is the lone
// statement it always was. A take refused (a live holder, no session) is
// refused alone, its row saying so; a statement that raises rolls its
// group back whole, and each member goes again alone, outside the group.
// A group's row waits are bounded (stepTakeWait), so one session's delete
// or another replica's take does not hold up the replica's other session
// locks, and its rows are taken in (tenant, session) order, so two
// replicas' groups never deadlock.

// sessionTake is one session lock's take and, once sent, its answer.
type sessionTake struct {
	s         *Store
	ctx       context.Context // the caller's: a group of one is sent under it
	id, token string

	got   string    // the token taken; "" when a live holder has the row
	found bool      // the session is stored
	at    time.Time // the database's clock as the take's transaction began
}

// sessionLetGo is one session lock's let-go.
type sessionLetGo struct {
	s         *Store
	id, token string
}

// sessionLocksMax caps one transaction's takes or let-gos: a group holds
// its rows until it commits.
const sessionLocksMax = 256

// boundedWait has q's transaction wait for a row no longer than
// stepTakeWait, set in the lock_timeout of lockTaking's first CTE, before
// any row is waited for.
func boundedWait(q string) string {
	return strings.Replace(q, `SELECT set_config('synchronous_commit', 'off', true)`,
		fmt.Sprintf(`SELECT set_config('synchronous_commit', 'off', true), set_config('lock_timeout', '%dms', true)`, stepTakeWait.Milliseconds()), 1)
}

// lockTakeBounded is lockTake, a session lock's lone take, with its row
// waits bounded (boundedWait).
var lockTakeBounded = boundedWait(lockTake)

// sessionLocksTake is lockTake for several session locks, one row each of
// the arrays of tenants ($1), sessions ($2) and tokens ($3), inserted in
// that order: the token taken of each ("" when a live holder has it) and
// whether its session is stored, by its index from 1 ($4, $5 as lockTake's
// $5, $6). Its rows wait no longer than stepTakeWait. One statement, so
// one snapshot: each take of a session lock is on a row no other of the
// group's touches (one caller takes a session's lock at a time in a
// process, sessionGates), and asks nothing of the rows before it.
var sessionLocksTake = fmt.Sprintf(`WITH lockcfg AS (SELECT set_config('synchronous_commit', 'off', true), set_config('lock_timeout', '%dms', true)),
		u AS (SELECT u.* FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(tenant, id, token, i) CROSS JOIN lockcfg),
		sess AS (SELECT u.i FROM u WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.tenant = u.tenant AND s.id = u.id)),
		taken AS (
			INSERT INTO locks (tenant, session_id, name, token, expires_at)
			SELECT u.tenant, u.id, 'session', u.token, now() + $4 * interval '1 millisecond' FROM u JOIN sess USING (i) ORDER BY u.i
			ON CONFLICT (tenant, session_id, name) DO UPDATE
				SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at, spent_cost = 0, spent_tokens = 0,
					inherited = CASE WHEN locks.spent_cost <> 0 OR locks.spent_tokens <> 0
						THEN `+spendInherited+` ELSE locks.inherited END
				WHERE `+ranOut("$5")+`
			RETURNING token)
		SELECT u.i, coalesce(t.token, ''), EXISTS (SELECT 1 FROM sess WHERE sess.i = u.i), now()
		FROM u LEFT JOIN taken t ON t.token = u.token ORDER BY u.i`, stepTakeWait.Milliseconds())

// lockDeleteBounded is lockDelete, a session lock's lone let-go, with its
// row waits bounded as a take's are.
var lockDeleteBounded = fmt.Sprintf(`WITH letgocfg AS (SELECT set_config('lock_timeout', '%dms', true))
		SELECT massgen_let_go($1, $2, $3, $4) FROM letgocfg`, stepTakeWait.Milliseconds())

// sessionLocksLetGo is lockDelete for several session locks, one row each
// of the arrays of tenants ($1), sessions ($2) and tokens ($3), let go in
// that order, each row waited for no longer than stepTakeWait.
var sessionLocksLetGo = fmt.Sprintf(`WITH letgocfg AS (SELECT set_config('lock_timeout', '%dms', true))
		SELECT massgen_let_go(u.tenant, u.id, 'session', u.token)
		FROM letgocfg, unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(tenant, id, token, i) ORDER BY u.i`, stepTakeWait.Milliseconds())

// takeSession takes the session lock of id once, grouped with the
// replica's other session lock takes: tryLock's answers.
func (s *Store) takeSession(ctx context.Context, id string) (string, error) {
	t := &sessionTake{s: s, ctx: ctx, id: id, token: s.db.lockToken()}
	err := s.db.sessionTakes.do(ctx, t, s.db.takeSessions)
	if errors.Is(err, errTakeAlone) {
		// Its group was rolled back (a statement raised, or a row waited
		// for longer than stepTakeWait): nothing of it was written. Alone,
		// it waits for its row as a take always did.
		return s.tryLock(ctx, id, "session")
	}
	return s.took(id, "session", t.token, t.got, t.found, t.at, err)
}

// takeSessions is the session lock takes' group write. A group of one is
// lockTake under its caller's context, its row waits bounded; a larger
// group is sessionLocksTake under the group's time limit (stepTakeLimit),
// in (tenant, session) order, sessionLocksMax to a transaction. A
// transaction a statement raised in answers its members errTakeAlone;
// any other error may have come after the commit, so each member is
// given it and lets its token go (took).
func (db *DB) takeSessions(ts []*sessionTake) []error {
	errs := make([]error, len(ts))
	if len(ts) == 1 {
		t := ts[0]
		errs[0] = alone(db.pool.QueryRow(t.ctx, lockTakeBounded, t.s.tenant, t.id, "session", t.token, lockTTL.Milliseconds(), db.lockTakeover()).Scan(&t.got, &t.found, &t.at))
		return errs
	}
	return answerInChunks(ts, sortedBySession(ts, func(t *sessionTake) (string, string) { return t.s.tenant, t.id }), sessionLocksMax, db.sendSessionTakes)
}

// sendSessionTakes sends sessionLocksTake for ts and reads each its answer.
func (db *DB) sendSessionTakes(ts []*sessionTake) error {
	ctx, cancel := context.WithTimeout(db.ctx, stepTakeLimit)
	defer cancel()
	tenants, ids, tokens := sessionArrays(ts, func(t *sessionTake) (string, string, string) { return t.s.tenant, t.id, t.token })
	rows, err := db.pool.Query(ctx, sessionLocksTake, tenants, ids, tokens, lockTTL.Milliseconds(), db.lockTakeover())
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var i int
		var got string
		var found bool
		var at time.Time
		if err := rows.Scan(&i, &got, &found, &at); err != nil {
			return err
		}
		if i < 1 || i > len(ts) {
			return fmt.Errorf("a grouped session lock take answered for take %d of %d", i, len(ts))
		}
		t := ts[i-1]
		t.got, t.found, t.at = got, found, at
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != len(ts) {
		return fmt.Errorf("a grouped session lock take answered %d of its %d takes", n, len(ts))
	}
	return nil
}

// letGoSession lets the session lock token of id go, grouped with the
// replica's other session lock let-gos (letGoBy's way).
func (s *Store) letGoSession(id, token string) {
	s.db.held.remove(s.tenant, token)
	// A let-go is never abandoned while queued: its row would stay held
	// until it expired, stalling the session's next step.
	err := s.db.sessionLetGos.do(context.Background(), &sessionLetGo{s: s, id: id, token: token}, s.db.letGoSessions)
	if errors.Is(err, errTakeAlone) {
		// Rolled back: let go alone, waiting for its row as a let-go
		// always did.
		err = s.sendLetGo(lockDelete, id, "session", token)
	}
	s.letGoFailed(id, "session", token, err)
}

// letGoSessions is the session lock let-gos' group write: a group of one
// is lockDelete, its row waits bounded; a larger group is
// sessionLocksLetGo, in (tenant, session) order, sessionLocksMax to a
// transaction. Errors are answered as takeSessions' are.
func (db *DB) letGoSessions(ls []*sessionLetGo) []error {
	errs := make([]error, len(ls))
	ctx, cancel := context.WithTimeout(context.Background(), letGoLimit)
	defer cancel()
	if len(ls) == 1 {
		l := ls[0]
		_, err := db.pool.Exec(ctx, lockDeleteBounded, l.s.tenant, l.id, "session", l.token)
		errs[0] = alone(err)
		return errs
	}
	answer := map[*sessionLetGo]error{}
	for part := range slices.Chunk(sortedBySession(ls, func(l *sessionLetGo) (string, string) { return l.s.tenant, l.id }), sessionLocksMax) {
		tenants, ids, tokens := sessionArrays(part, func(l *sessionLetGo) (string, string, string) { return l.s.tenant, l.id, l.token })
		_, err := db.pool.Exec(ctx, sessionLocksLetGo, tenants, ids, tokens)
		err = alone(err)
		for _, l := range part {
			answer[l] = err
		}
	}
	for i, l := range ls {
		errs[i] = answer[l]
	}
	return errs
}

// alone turns a PostgreSQL error that is not an outage, which rolled its
// group's transaction back whole, into errTakeAlone.
func alone(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && !unavailable(err) {
		return errTakeAlone
	}
	return err
}

// answerInChunks sends sorted (ts in the order rows are taken) in chunks
// of at most max, one transaction each, and answers each of ts, in ts'
// order, its chunk's error (alone's: errTakeAlone for a chunk the server
// refused, so its members go again alone).
func answerInChunks[T comparable](ts, sorted []T, max int, send func([]T) error) []error {
	answer := make(map[T]error, len(ts))
	for part := range slices.Chunk(sorted, max) {
		err := alone(send(part))
		for _, t := range part {
			answer[t] = err
		}
	}
	errs := make([]error, len(ts))
	for i, t := range ts {
		errs[i] = answer[t]
	}
	return errs
}

// sortedBySession is vs in (tenant, session) order, the order every
// replica's groups take their rows in.
func sortedBySession[T any](vs []T, key func(T) (string, string)) []T {
	sorted := slices.Clone(vs)
	slices.SortStableFunc(sorted, func(a, b T) int {
		at, ai := key(a)
		bt, bi := key(b)
		return cmp.Or(cmp.Compare(at, bt), cmp.Compare(ai, bi))
	})
	return sorted
}

// sessionArrays is the statements' arrays of vs's tenants, sessions and
// tokens.
func sessionArrays[T any](vs []T, of func(T) (string, string, string)) (tenants, ids, tokens []string) {
	tenants, ids, tokens = make([]string, len(vs)), make([]string, len(vs)), make([]string, len(vs))
	for i, v := range vs {
		tenants[i], ids[i], tokens[i] = of(v)
	}
	return tenants, ids, tokens
}
