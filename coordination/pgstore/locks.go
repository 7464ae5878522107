package pgstore

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The store's locks are rows (the locks table): taking one inserts its row,
// or takes over a row whose holder stopped renewing it; the heartbeat
// renews every row this process holds; letting go deletes it (a session
// lock another caller in this process waits for passes to it instead,
// its row kept: sessionlock.go). A row lock
// rather than an advisory lock, because an advisory lock lives on one
// connection: a thousand running sessions would each pin one, and a
// connection lost to a network blip would drop the lock without the holder
// knowing.

// held is the lock rows this process holds, by tenant, for the heartbeat,
// and the rows it let go of while the database was unreachable, which the
// heartbeat deletes once it answers (or they would keep their sessions
// locked until they expire).
type held struct {
	mu     sync.Mutex
	tokens map[string]map[string]heldRow  // tenant → token → its row
	gone   map[string]map[string]struct{} // tenant → tokens to delete
}

// heldRow is which lock a held token is, so the heartbeat can put back a
// row the database lost, and when its row was written (putBackSince): the
// database's clock as the take's transaction began, which a reap that
// expired the row committed after and a registration made again began
// later still, so the two compare without a clock allowance.
type heldRow struct {
	session, name string
	taken         time.Time
}

func (h *held) init() {
	h.tokens = map[string]map[string]heldRow{}
	h.gone = map[string]map[string]struct{}{}
}

// letGo queues a row whose delete failed for the heartbeat.
func (h *held) letGo(tenant, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.gone[tenant]
	if m == nil {
		m = map[string]struct{}{}
		h.gone[tenant] = m
	}
	m[token] = struct{}{}
}

// takeGone empties the queue of rows to delete.
func (h *held) takeGone() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]string, len(h.gone))
	for t, m := range h.gone {
		for tok := range m {
			out[t] = append(out[t], tok)
		}
	}
	h.gone = map[string]map[string]struct{}{}
	return out
}

func (h *held) add(tenant, token string, r heldRow) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.tokens[tenant]
	if m == nil {
		m = map[string]heldRow{}
		h.tokens[tenant] = m
	}
	m[token] = r
}

func (h *held) remove(tenant, token string) { h.take(tenant, token) }

// holds tells whether token is held, renewed by the heartbeat: one it
// forgot (a reap expired its row) is not, nor one let go.
func (h *held) holds(tenant, token string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.tokens[tenant][token]
	return ok
}

// forgetSession forgets the rows held of session id: a delete took them
// with the session.
func (h *held) forgetSession(tenant, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for tok, r := range h.tokens[tenant] {
		if r.session == id {
			delete(h.tokens[tenant], tok)
		}
	}
	if len(h.tokens[tenant]) == 0 {
		delete(h.tokens, tenant)
	}
}

// take forgets token and returns its row, if it was held: a landing that
// fails gives it back as it was (add), and one the heartbeat forgot
// meanwhile stays forgotten.
func (h *held) take(tenant, token string) (heldRow, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.tokens[tenant][token]
	delete(h.tokens[tenant], token)
	if len(h.tokens[tenant]) == 0 {
		delete(h.tokens, tenant)
	}
	return r, ok
}

// stillHeld keeps, of tokens, those this process still holds: a lock let go
// while the heartbeat ran is not to be put back.
func (h *held) stillHeld(tenant string, tokens []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var kept []string
	for _, tok := range tokens {
		if _, ok := h.tokens[tenant][tok]; ok {
			kept = append(kept, tok)
		}
	}
	return kept
}

// snapshot lists the held tokens by tenant, with their rows.
func (h *held) snapshot() map[string]map[string]heldRow {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]map[string]heldRow, len(h.tokens))
	for t, m := range h.tokens {
		out[t] = maps.Clone(m)
	}
	return out
}

// heartbeat renews the held lock rows every lockBeat until ctx ends.
func (db *DB) heartbeat(ctx context.Context) {
	defer db.done.Done()
	every(ctx, lockBeat, func() {
		db.deleteGone(ctx)
		for tenant, rows := range db.held.snapshot() {
			// One deadline for the tenant's parts, as the one statement had:
			// a part's own would let a slow database stretch a beat past
			// the rows' TTL. The first part that fails ends the beat's
			// renewal; the parts are drawn from a map, so the next beat
			// starts elsewhere.
			rctx, cancel := context.WithTimeout(ctx, lockBeat)
			for part := range renewParts(rows) {
				if err := db.renew(rctx, tenant, part); err != nil {
					if ctx.Err() == nil {
						db.log.Warn().Err(err).Str("tenant", tenant).Msg("could not renew this replica's locks in PostgreSQL; trying again at the next heartbeat")
					}
					break
				}
			}
			cancel()
		}
	})
}

// lockRenew extends the expiry of the rows of tokens ($4), each found by
// its key ($2, $3), not among the tenant's rows by its token: a part's few
// rows among the thousands of the tenant (and their dead versions between
// vacuums), which a filter on the token read whole at every part, a
// sequential scan in the plan pgx's prepared statement keeps
// (TestARenewalLooksUpItsRowsByKey).
const lockRenew = `UPDATE locks l SET expires_at = now() + $5 * interval '1 millisecond'
		FROM unnest($2::text[], $3::text[], $4::text[]) AS u(s, n, t)
		WHERE l.tenant = $1 AND l.session_id = u.s AND l.name = u.n AND l.token = u.t
		RETURNING l.token`

// renewPart is how many rows one renewal statement renews. A renewal
// holds each row it renewed until it commits, and a landing, which locks
// its step's row, waits for that: one statement for a busy replica's
// hundreds of rows (800 at 1,000 sessions) held landings up for its
// whole run, about 40-80 ms a beat under the overhead bench; a part's
// statement commits in about a millisecond.
const renewPart = 64

// renewParts splits rows into parts of at most renewPart, each renewed by
// a statement (a transaction) of its own.
func renewParts(rows map[string]heldRow) iter.Seq[map[string]heldRow] {
	return func(yield func(map[string]heldRow) bool) {
		part := make(map[string]heldRow, min(len(rows), renewPart))
		for tok, r := range rows {
			part[tok] = r
			if len(part) == renewPart {
				if !yield(part) {
					return
				}
				part = make(map[string]heldRow, renewPart)
			}
		}
		if len(part) > 0 {
			yield(part)
		}
	}
}

// deleteGone lets go of the lock rows let go while the database was
// unreachable (lockDelete's way: a row with inherited spend stays); those
// it cannot reach yet wait for the next heartbeat.
func (db *DB) deleteGone(ctx context.Context) {
	for tenant, tokens := range db.held.takeGone() {
		rctx, cancel := context.WithTimeout(ctx, lockBeat)
		_, err := db.beats.Exec(rctx, lockGoneDelete, tenant, tokens)
		cancel()
		if err != nil && ctx.Err() == nil {
			for _, tok := range tokens {
				db.held.letGo(tenant, tok)
			}
		}
	}
}

// lockGoneDelete lets the rows of tokens ($2) go as lockDeleteShared
// does each, their spend kept in shared_spend with them: a token that never
// shared has no such row, and costs the delete nothing.
const lockGoneDelete = `WITH spendgone AS (
			DELETE FROM shared_spend d WHERE d.tenant = $1 AND d.spender = ANY($2) AND ` + spendNotInherited + `)
		SELECT massgen_let_go(tenant, session_id, name, token) FROM locks WHERE tenant = $1 AND token = ANY($2)`

// renew extends the held rows' expiry and puts back those the database
// lost. A crash of the database (a restart after `pg_ctl stop -m
// immediate`, a power cut) empties the unlogged locks table; a row gone
// rather than taken by another replica is still this replica's lock, and
// nobody else may have it meanwhile: what another replica could do with it
// is fenced by the leases (logged rows that survive the crash) and the
// ledger's key. A row another replica holds now is left to it.
func (db *DB) renew(ctx context.Context, tenant string, rows map[string]heldRow) error {
	tokens := slices.Collect(maps.Keys(rows))
	sessions, names := make([]string, len(tokens)), make([]string, len(tokens))
	for i, tok := range tokens {
		sessions[i], names[i] = rows[tok].session, rows[tok].name
	}
	got, err := db.beats.Query(ctx, lockRenew, tenant, sessions, names, tokens, lockTTL.Milliseconds())
	if err != nil {
		return err
	}
	renewed, err := collectStrings(got)
	if err != nil || len(renewed) == len(tokens) {
		return err
	}
	for _, tok := range renewed {
		delete(rows, tok)
	}
	// A row the update missed was lost by the database or let go by its
	// holder since the snapshot (unlock forgets the token, then deletes the
	// row): only the first is put back. A release racing the insert is
	// undone right after it, whichever of the two deletes comes second.
	missed := db.held.stillHeld(tenant, slices.Collect(maps.Keys(rows)))
	if len(missed) == 0 {
		return nil
	}
	// A row taken before this replica's registration standing now is not
	// put back: a reap (liveness.go) deleted the registration and expired
	// the row, which another replica may have taken and let go since; put
	// back, the lock would be this replica's again, unknown to the one
	// that had it in between. Such a token is forgotten: its holder lost
	// the lock. Its landing's massgen_hold_lock still takes a missing row
	// back (it cannot tell a reap from a crash) and lets it go in the same
	// transaction; a server step's landing is fenced by its step lease,
	// which the reap expired too, and a host step's by the session's
	// cancels and the ledger's key. A crash keeps the registration (a
	// logged row), and so does a failover to a standby.
	since, all, none, err := db.putBackSince(ctx)
	if err != nil {
		return err
	}
	sessions, names = sessions[:0], names[:0]
	var lost []string
	for _, tok := range missed {
		r := rows[tok]
		if none || !all && r.taken.Before(since) {
			db.held.remove(tenant, tok)
			continue
		}
		sessions, names, lost = append(sessions, r.session), append(names, r.name), append(lost, tok)
	}
	if len(lost) == 0 {
		return nil
	}
	// A step's row comes back with the spend its holder had shared on it,
	// kept in shared_spend (migrations/0018_shared_spend.sql): counted on
	// its row again, and inherited by a take if the holder dies after all.
	// A row put back is written now: its take is this insert's. One that
	// another holder has keeps its take's time.
	back, err := db.beats.Query(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at, spent_cost, spent_tokens)
		SELECT $1, u.s, u.n, u.t, now() + $5 * interval '1 millisecond', coalesce(d.cost_usd, 0), coalesce(d.tokens, 0)
		FROM unnest($2::text[], $3::text[], $4::text[]) AS u(s, n, t)
		LEFT JOIN shared_spend d ON d.tenant = $1 AND d.session_id = u.s AND d.spender = u.t
		WHERE EXISTS (SELECT 1 FROM sessions WHERE tenant = $1 AND id = u.s)
		ON CONFLICT DO NOTHING
		RETURNING token, now()`, tenant, sessions, names, lost, lockTTL.Milliseconds())
	if err != nil {
		return err
	}
	written := map[string]time.Time{}
	var tok string
	var at time.Time
	if _, err := pgx.ForEachRow(back, []any{&tok, &at}, func() error { written[tok] = at; return nil }); err != nil {
		return err
	}
	kept := db.held.stillHeld(tenant, lost)
	for _, tok := range kept {
		if at, ok := written[tok]; ok {
			r := rows[tok]
			r.taken = at
			db.held.add(tenant, tok, r)
		}
	}
	if released := slices.DeleteFunc(lost, func(tok string) bool { return slices.Contains(kept, tok) }); len(released) > 0 {
		_, err = db.beats.Exec(ctx, `DELETE FROM locks WHERE tenant = $1 AND token = ANY($2)`, tenant, released)
	}
	return err
}

// tryLock takes the named lock of a session once: its token, or "" when a
// live holder has it. ErrSessionNotFound for a session not stored.
func (s *Store) tryLock(ctx context.Context, id, name string) (string, error) {
	token := s.db.lockToken()
	var got string
	var found bool
	var at time.Time
	err := s.db.pool.QueryRow(ctx, lockTake, s.tenant, id, name, token, lockTTL.Milliseconds(), s.db.lockTakeover()).Scan(&got, &found, &at)
	return s.took(id, name, token, got, found, at, err)
}

// lockTake takes a lock row: inserted, or taken over from a holder that
// stopped renewing it. It returns the token taken (empty if a live holder has
// the row) and whether the session exists.
//
// Its commit does not wait for the WAL flush (set_config, local to its
// transaction, read by sess so that it runs). The locks table is unlogged,
// but its foreign key share-locks the session's row, a logged write, and
// that made every take wait for an fsync: 1.4–2 ms in a one-session trace,
// twice a step (the session lock and the step lock). The session lock's
// take is on a round's critical path: a round's four landings queue on it,
// so they waited for four of these flushes besides their own four. Nothing
// is lost by not waiting: a crash that forgets the commit also empties the
// locks table, as it always did. Whatever shares its transaction shares
// the unflushed commit, so nothing durable may (LockStep's batch holds
// only a read besides). Its CTE is named apart from eventsInsert's, whose
// text begins the same way, so a count of round trips by their SQL
// (QueryCounts) tells lock takes from timeline writes. A step lock taken
// over starts with no spend of its own and inherits its holder's
// (stepLockTake).
var lockTake = lockTaking + `
		SELECT coalesce((SELECT token FROM taken), ''), EXISTS (SELECT 1 FROM sess), now()`

// lockTaking is lockTake's common part: the row taken, its token returned,
// and with it what the row inherited. A row that ran out is taken over
// only if it ran out before $6, when an outage excuses its holder
// (DB.lockTakeover; NULL: none does). A row taken over keeps, as inherited,
// what it inherited before plus the spend its holder had shared, under that
// holder's token (sharedspend.go); only a step lock's row has any. The
// spend is read from locks., the row as last committed, which the update
// acts on: a share the holder committed while the take waited for its row
// is counted in full.
var lockTaking = `WITH lockcfg AS (SELECT set_config('synchronous_commit', 'off', true)),
		sess AS (SELECT 1 FROM sessions CROSS JOIN lockcfg WHERE tenant = $1 AND id = $2),
		taken AS (
			INSERT INTO locks (tenant, session_id, name, token, expires_at)
			SELECT $1, $2, $3, $4, now() + $5 * interval '1 millisecond' FROM sess
			ON CONFLICT (tenant, session_id, name) DO UPDATE
				SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at, spent_cost = 0, spent_tokens = 0,
					inherited = CASE WHEN locks.spent_cost <> 0 OR locks.spent_tokens <> 0
						THEN ` + spendInherited + ` ELSE locks.inherited END
				WHERE ` + ranOut("$6") + `
			RETURNING token, inherited)`

// spendInherited is a lock row's inherited spend once its holder's is
// added, under the holder's token: what a take over it (lockTaking) or a
// fence of a dead holder's spend (deadSpendTake) leaves it.
const spendInherited = `locks.inherited || jsonb_build_object(locks.token, jsonb_build_array(locks.spent_cost, locks.spent_tokens))`

// ranOut is the condition on which a lock row is a holder's no more: past
// its expiry and, in an outage that excuses its holder, past the time the
// parameter named by param holds (DB.lockTakeover; NULL: none does).
func ranOut(param string) string {
	return `locks.expires_at < now() AND (` + param + `::timestamptz IS NULL OR locks.expires_at < ` + param + `)`
}

// stepLockTake is lockTake for a step lock, which also returns what the
// row inherited: nothing for a row inserted, and for a row taken over from
// a holder that stopped renewing it, that holder's spend and what its own
// take had inherited and not yet seen recorded. A replica that died
// mid-step spent that, and no record of it would reach the ledger; the
// taker records each key (coordination's recordTakenOver), and the record
// takes it off the row (sessionSpendRecorded). A holder whose landing
// deleted its row while the take waited for it left no row to update: the
// take inserted one, and the spend is in that landing's entry.
var stepLockTake = lockTaking + `
		SELECT coalesce((SELECT token FROM taken), ''), EXISTS (SELECT 1 FROM sess),
			coalesce((SELECT inherited FROM taken), '{}'), now()`

// took reads lockTake's answer (at: the database's clock as its
// transaction began): the token held now (and kept renewed by
// the heartbeat), "" for a lock someone else holds. A take that failed
// once sent (the connection lost, the caller's context ended) may have
// committed, the lock taken but neither renewed nor let go, busy for
// lockTTL: the heartbeat deletes its row, if any, once the database
// answers; a row never written costs a no-op delete.
func (s *Store) took(id, name, token, got string, found bool, at time.Time, err error) (string, error) {
	if err != nil {
		s.db.held.letGo(s.tenant, token)
		return "", fmt.Errorf("taking the %s lock of session %q: %w", name, id, err)
	}
	if !found {
		return "", notFound(id)
	}
	if got == "" {
		return "", nil
	}
	s.db.held.add(s.tenant, token, heldRow{session: id, name: name, taken: at})
	return token, nil
}

// lockDelete lets a lock row go, if it is still the token's: deleted, or
// kept holderless while it carries inherited spend not yet recorded
// (migrations/0016_inherited_spend.sql), which must go on being counted.
const lockDelete = `SELECT massgen_let_go($1, $2, $3, $4)`

// lockDeleteShared is lockDelete for a step lock that shared its spend: the
// spend it kept in shared_spend goes as massgen_let_go clears the row's own
// (its step landed, its spend was recorded, or its holder, alive, records
// it), unless a take moved it into a row's inherited spend, where it is
// still to be recorded (spendNotInherited). The same round trip.
const lockDeleteShared = `WITH spendgone AS (
			DELETE FROM shared_spend d WHERE d.tenant = $1 AND d.session_id = $2 AND d.spender = $4 AND ` + spendNotInherited + `)
		SELECT massgen_let_go($1, $2, $3, $4)`

// spendNotInherited is the condition on a shared_spend row d that no step
// lock row inherited its key (a take over its holder's row moved it there).
const spendNotInherited = `NOT EXISTS (SELECT 1 FROM locks l
				WHERE l.tenant = d.tenant AND l.session_id = d.session_id AND l.name LIKE 'step:%' AND l.inherited ? d.spender)`

// unlock lets a lock row go.
func (s *Store) unlock(id, name, token string) { s.letGoBy(lockDelete, id, name, token) }

// letGoBy lets a lock row go by the statement q (lockDelete, or
// lockDeleteShared for a step lock that shared its spend).
func (s *Store) letGoBy(q, id, name, token string) {
	s.db.held.remove(s.tenant, token)
	s.letGoFailed(id, name, token, s.sendLetGo(q, id, name, token))
}

// letGoLimit bounds a let-go's round trip.
const letGoLimit = 5 * time.Second

// sendLetGo sends q, a let-go of the lock row token, alone.
func (s *Store) sendLetGo(q, id, name, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), letGoLimit)
	defer cancel()
	_, err := s.db.pool.Exec(ctx, q, s.tenant, id, name, token)
	return err
}

// letGoFailed handles the error of a let-go, if any: a row the database
// could not be reached to delete is left to the heartbeat, any other to
// its expiry.
func (s *Store) letGoFailed(id, name, token string, err error) {
	if err == nil {
		return
	}
	if unavailable(err) {
		s.db.held.letGo(s.tenant, token)
		s.db.log.Warn().Err(err).Str("session", id).Str("lock", name).Msg("could not let a lock go: PostgreSQL is unreachable; the heartbeat lets it go when it answers")
		return
	}
	s.db.log.Warn().Err(err).Str("session", id).Str("lock", name).Msg("could not let a lock go in PostgreSQL; it expires by itself")
}

// LockRun takes the session's run lock, or fails at once with
// ErrSessionRunning.
func (s *Store) LockRun(ctx context.Context, id string) (func(), error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	token, err := s.tryLock(ctx, id, "run")
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, &coordination.RunningError{Session: id, By: "a run on a replica sharing this database"}
	}
	var once sync.Once
	return func() { once.Do(func() { s.unlock(id, "run", token) }) }, nil
}

// InFlight tells which agents hold their step lock now, without taking any.
// One statement answers both questions, so an idle session costs one round
// trip, not a second to tell it from a missing one: the session's row
// comes back with each live step lock, or once with none (a missing
// session, no row at all).
func (s *Store) InFlight(ctx context.Context, id string) (map[string]bool, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT substr(l.name, 6) FROM sessions s
		LEFT JOIN locks l ON l.tenant = s.tenant AND l.session_id = s.id AND l.name LIKE 'step:%' AND l.expires_at >= now()
		WHERE s.tenant = $1 AND s.id = $2`, s.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading the steps in flight of session %q: %w", id, err)
	}
	agents, err := pgx.CollectRows(rows, pgx.RowTo[*string])
	if err != nil {
		return nil, fmt.Errorf("reading the steps in flight of session %q: %w", id, err)
	}
	if len(agents) == 0 {
		return nil, notFound(id)
	}
	held := map[string]bool{}
	for _, a := range agents {
		if a != nil {
			held[*a] = true
		}
	}
	return held, nil
}
