package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Run and step leases are rows of the leases table (agent_id '' for the run
// lease); the rules are coordination's (LeaseChange), applied to the row as
// it stands and written only while it still stands so. A row this replica
// wrote last is known (written): the rule is applied to it and the write
// is one UPDATE that lands only if the row is still that one, column for
// column; a step claims and releases its lease so, one round trip each.
// A claim of a row not known inserts its row where there is none, and
// reads the row there in the same round trip. Otherwise, or when the row
// moved on, the rule is applied inside one transaction holding the row,
// read FOR UPDATE SKIP LOCKED for a claim, so a claim racing another's
// locked read is told the row is being claimed. Neither path is a
// promise of no waiting: an UPDATE (or the locked path's upsert over a
// row it passed by) waits for a rival transaction that holds the row, as
// the write before the known-row path did; a rival holds it only for its
// own two round trips, or a run's fenced session entry for its append's
// (AppendSessionLeased), which a claim passing it by is told is a claim.

var (
	_ coordination.LeaseStore     = (*Store)(nil)
	_ coordination.StepLeaseStore = (*Store)(nil)
)

// AcquireRun claims the session's run lease (coordination.LeaseStore).
func (s *Store) AcquireRun(ctx context.Context, id string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	return s.claim(ctx, id, "", owner, ttl)
}

// RenewRun extends a claim (coordination.LeaseStore).
func (s *Store) RenewRun(ctx context.Context, id string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.renew().Renew(ctx, id, "", version, ttl)
	s.db.written.note(s.tenant, id, "", l, err)
	return l, err
}

// ReleaseRun ends a claim (coordination.LeaseStore).
func (s *Store) ReleaseRun(ctx context.Context, id string, version int64) error {
	return s.leases(false).Release(ctx, id, "", version)
}

// ReadRun reads the run lease; nil if the run was never claimed.
func (s *Store) ReadRun(ctx context.Context, id string) (*coordination.RunLease, error) {
	all, err := s.readLeases(ctx, id, true)
	if err != nil {
		return nil, err
	}
	return all[""], nil
}

// AcquireStep claims an agent's step lease (coordination.StepLeaseStore).
func (s *Store) AcquireStep(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	if err := coordination.CheckAgentID(agent); err != nil {
		return coordination.RunLease{}, err
	}
	return s.claim(ctx, id, agent, owner, ttl)
}

// RenewStep extends a step's claim (coordination.StepLeaseStore).
func (s *Store) RenewStep(ctx context.Context, id, agent string, version int64, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.renew().Renew(ctx, id, agent, version, ttl)
	s.db.written.note(s.tenant, id, agent, l, err)
	return l, err
}

// ReleaseStep ends a step's claim (coordination.StepLeaseStore).
func (s *Store) ReleaseStep(ctx context.Context, id, agent string, version int64) error {
	return s.leases(false).Release(ctx, id, agent, version)
}

// ReadSteps reads every agent's step lease. A lease whose agent's step lock
// is held (its row renewed by a live replica's heartbeat) reads Alive: a
// late lease heartbeat is not a dead step. One round trip (readLeases): a
// landing's fence reads it at every step.
func (s *Store) ReadSteps(ctx context.Context, id string) (map[string]*coordination.RunLease, error) {
	all, err := s.readLeases(ctx, id, false)
	if err != nil {
		return nil, err
	}
	delete(all, "")
	return all, nil
}

// claim applies the claim rule, the row taken FOR UPDATE SKIP LOCKED, to
// the row as a reader sees it: another process's lease an outage excuses
// reads held (excuse), so its holder keeps it.
func (s *Store) claim(ctx context.Context, id, agent string, owner coordination.LeaseOwner, ttl time.Duration) (coordination.RunLease, error) {
	l, err := s.excusedChange(s.leases(true), owner).Claim(ctx, id, agent, owner, ttl)
	if errors.Is(err, errClaimedNow) {
		if agent == "" {
			return coordination.RunLease{}, &coordination.RunningError{Session: id, By: claimingNow}
		}
		return coordination.RunLease{}, &coordination.BusyError{Session: id, Agent: agent, By: "another replica claiming it at this moment"}
	}
	return l, err
}

// claimingNow names the holder of a run lease row another transaction
// holds: a replica claiming it, or the run holding it recording an entry
// fenced by it (AppendSessionLeased).
const claimingNow = "another replica at this moment (claiming it, or its run recording an entry)"

// errClaimedNow: another transaction holds the lease row (a claim racing
// this one); SKIP LOCKED passed it by.
var errClaimedNow = errors.New("the lease row is being claimed by another transaction")

// leases is the store's coordination.LeaseChange; skip makes the row read
// FOR UPDATE SKIP LOCKED (a claim) rather than wait for it (a renew or a
// release, which must not be refused because a rival is looking). A row
// this replica wrote last is changed in one round trip (changeKnown), and
// a claim of a row it does not know in one if there is none, two if there
// is (claimUnknown); any other change, or a row that moved on since, takes
// a transaction of two (locked).
func (s *Store) leases(skip bool) coordination.LeaseChange {
	locked := s.locked(skip)
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		if err := live(ctx, id); err != nil {
			return coordination.RunLease{}, err
		}
		var next coordination.RunLease
		var done bool
		var err error
		if cur, ok := s.db.written.get(s.tenant, id, agent); ok {
			next, done, err = s.changeKnown(ctx, id, agent, cur, rule, false)
		} else {
			next, done, err = s.claimUnknown(ctx, id, agent, rule)
		}
		if done {
			return next, err
		}
		next, err = locked(ctx, id, agent, rule)
		s.db.written.note(s.tenant, id, agent, next, err)
		return next, err
	}
}

// claimUnknown is a change of a row this replica does not know by a rule
// that takes no row (a claim): its result for no row is inserted only
// where there is none, and the row read in the same round trip. A row
// there already (another replica's, or this one's before a restart) is
// changed as known (changeKnown), just read; a rule that refuses it is
// answered, the row being as fresh as a locked read's. done is false, for
// the locked path to decide, when the rule needs a row (a renewal or a
// release), when no session holds the row, or when the row moved on
// before the UPDATE.
func (s *Store) claimUnknown(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (next coordination.RunLease, done bool, err error) {
	if next, err = rule(nil); err != nil {
		return coordination.RunLease{}, false, nil
	}
	b := &pgx.Batch{}
	b.Queue(claimAbsentSQL, appendLeaseRow(append(make([]any, 0, 3+leaseRowLen), s.tenant, id, agent), next)...)
	b.Queue(leaseColumns+` FROM leases WHERE tenant = $1 AND session_id = $2 AND agent_id = $3`, s.tenant, id, agent)
	// One implicit transaction: a read that fails takes the insert back.
	br := s.db.pool.SendBatch(ctx, b)
	tag, err := br.Exec()
	var cur *coordination.RunLease
	if err == nil {
		cur, err = scanLease(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return coordination.RunLease{}, true, err
	case tag.RowsAffected() == 1:
		s.db.written.put(s.tenant, id, agent, next)
		return next, true, nil
	case cur == nil:
		return coordination.RunLease{}, false, nil
	}
	return s.changeKnown(ctx, id, agent, *cur, rule, true)
}

// claimAbsentSQL inserts a lease row where there is none, in a session
// that is stored and whose id has no lease floor (a session of that id
// deleted before: the locked path begins the claim above its floor).
const claimAbsentSQL = `INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released, ran_before_ms, chain_from)
	SELECT $1, $2, $3, $4::text, $5::text, $6::integer, $7::bigint, $8::bigint, $9::timestamptz, $10::timestamptz, $11::timestamptz, $12::boolean, $13::bigint, $14::bigint
	WHERE EXISTS (SELECT 1 FROM sessions WHERE tenant = $1 AND id = $2)
		AND NOT EXISTS (SELECT 1 FROM lease_floors WHERE tenant = $1 AND session_id = $2)
	ON CONFLICT (tenant, session_id, agent_id) DO NOTHING`

// changeKnown applies rule to cur, the row as this replica wrote it last
// (or read it just now: fresh), and writes the result only if the row is
// still exactly that one (changeKnownSQL): then the rule saw what a locked
// read would have seen, and the write is the same compare-and-set on the
// row that the locked path makes, so the fencing is unchanged (a claim by
// another replica bumps the version; a renewal or a release moves
// renewed_at, expires_at or released). done is false when it wrote nothing
// and the locked path must decide: a row that moved on (or was deleted
// with its session), or a rule that refuses a row written, not read, which
// may be stale, so the refusal is left to a fresh read.
func (s *Store) changeKnown(ctx context.Context, id, agent string, cur coordination.RunLease, rule func(cur *coordination.RunLease) (coordination.RunLease, error), fresh bool) (next coordination.RunLease, done bool, err error) {
	if next, err = rule(&cur); err != nil {
		if !fresh {
			return coordination.RunLease{}, false, nil
		}
		return coordination.RunLease{}, true, err
	}
	tag, err := s.db.pool.Exec(ctx, changeKnownSQL, changeKnownArgs(s.tenant, id, agent, cur, next)...)
	if err != nil {
		// Whether it landed is unknown (the connection lost after the
		// commit): the row is known no more.
		s.db.written.drop(s.tenant, id, agent)
		return coordination.RunLease{}, true, err
	}
	if tag.RowsAffected() == 0 {
		s.db.written.drop(s.tenant, id, agent)
		return coordination.RunLease{}, false, nil
	}
	s.db.written.put(s.tenant, id, agent, next)
	return next, true, nil
}

// changeKnownSQL writes a lease's next state ($4…$14) only over the row
// as this replica last wrote it ($15…$25), every column compared.
const changeKnownSQL = `UPDATE leases SET owner_id = $4, host = $5, pid = $6, proc_start = $7, version = $8,
		claimed_at = $9, renewed_at = $10, expires_at = $11, released = $12, ran_before_ms = $13, chain_from = $14
	WHERE tenant = $1 AND session_id = $2 AND agent_id = $3
		AND (owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released, ran_before_ms, chain_from)
			= ($15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)`

// locked applies the rule inside a transaction holding the row. Two round
// trips (readThenWrite): the row and the session's existence with BEGIN,
// the write with COMMIT.
func (s *Store) locked(skip bool) coordination.LeaseChange {
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		lock := "FOR UPDATE"
		if skip {
			lock = "FOR UPDATE SKIP LOCKED"
		}
		reads := &pgx.Batch{}
		reads.Queue(leaseColumns+` FROM leases WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 `+lock, s.tenant, id, agent)
		reads.Queue(`SELECT EXISTS (SELECT 1 FROM sessions WHERE tenant = $1 AND id = $2)`, s.tenant, id)
		reads.Queue(`SELECT COALESCE((SELECT version FROM lease_floors WHERE tenant = $1 AND session_id = $2), 0)`, s.tenant, id)
		var cur *coordination.RunLease
		var next coordination.RunLease
		read := func(br pgx.BatchResults) error {
			var err error
			if cur, err = scanLease(br.QueryRow()); err != nil {
				return err
			}
			var found bool
			if err := br.QueryRow().Scan(&found); err != nil {
				return err
			}
			var floor int64
			if err := br.QueryRow().Scan(&floor); err != nil {
				return err
			}
			if cur == nil && !found {
				return notFound(id)
			}
			if cur == nil && floor > 0 {
				// A session of this id was deleted with its leases at
				// versions up to floor: the rules see a released lease
				// there, so a claim begins above it (a run of claims of
				// its own) and a claim of the deleted session's is stale.
				// Written as a new row: the INSERT finds none to update.
				cur = &coordination.RunLease{Version: floor, Released: true}
			}
			return nil
		}
		write := func(*pgxpool.Conn) (*pgx.Batch, error) {
			var err error
			if next, err = rule(cur); err != nil {
				return nil, err
			}
			w := &pgx.Batch{}
			queueLeaseWrite(w, s.tenant, id, agent, next, versionOf(cur))
			return w, nil
		}
		wrote := func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				// The row appeared (or moved on) after it was read without
				// a lock: a rival's claim won. Nothing was written; the
				// COMMIT after this ends an empty transaction.
				return errClaimedNow
			}
			return nil
		}
		if err := readThenWrite(ctx, s.db.pool, reads, read, write, wrote); err != nil {
			return coordination.RunLease{}, err
		}
		return next, nil
	}
}

// queueLeaseWrite queues the write of a lease's next state: the row
// inserted, or updated only while it is still at version prev.
func queueLeaseWrite(w *pgx.Batch, tenant, id, agent string, next coordination.RunLease, prev int64) {
	w.Queue(`INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released, ran_before_ms, chain_from)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (tenant, session_id, agent_id) DO UPDATE SET owner_id = EXCLUDED.owner_id, host = EXCLUDED.host,
			pid = EXCLUDED.pid, proc_start = EXCLUDED.proc_start, version = EXCLUDED.version, claimed_at = EXCLUDED.claimed_at,
			renewed_at = EXCLUDED.renewed_at, expires_at = EXCLUDED.expires_at, released = EXCLUDED.released,
			ran_before_ms = EXCLUDED.ran_before_ms, chain_from = EXCLUDED.chain_from
		WHERE leases.version = $15`,
		append(appendLeaseRow(append(make([]any, 0, 3+leaseRowLen+1), tenant, id, agent), next), prev)...)
}

// appendLeaseRow appends a lease's stored columns, in leaseColumns' order
// after the agent, as query arguments: its callers build their arguments
// in one slice sized for them all, where a slice a part made three a
// lease change (a step's claim and release each make one).
func appendLeaseRow(args []any, l coordination.RunLease) []any {
	return append(args, l.ID, l.Host, l.PID, int64(l.ProcStart), l.Version, l.Claimed, l.Renewed, l.Expires, l.Released, l.RanBefore.Milliseconds(), l.ChainFrom)
}

// leaseRowLen is how many arguments appendLeaseRow appends.
const leaseRowLen = 11

// changeKnownArgs is changeKnownSQL's arguments: the lease's key, its next
// state and the row as known.
func changeKnownArgs(tenant, id, agent string, cur, next coordination.RunLease) []any {
	args := append(make([]any, 0, 3+2*leaseRowLen), tenant, id, agent)
	return appendLeaseRow(appendLeaseRow(args, next), cur)
}

func versionOf(l *coordination.RunLease) int64 {
	if l == nil {
		return 0
	}
	return l.Version
}

const leaseColumns = `SELECT agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released, ran_before_ms, chain_from`

// scanLease reads one lease row, its leaseColumns after the lead ones;
// nil, nil for none.
func scanLease(row pgx.Row, lead ...any) (*coordination.RunLease, error) {
	var l coordination.RunLease
	var agent string
	var start, ran int64
	err := row.Scan(append(lead, &agent, &l.ID, &l.Host, &l.PID, &start, &l.Version, &l.Claimed, &l.Renewed, &l.Expires, &l.Released, &ran, &l.ChainFrom)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l.ProcStart, l.RanBefore = uint64(start), time.Duration(ran)*time.Millisecond
	l.Claimed, l.Renewed, l.Expires = l.Claimed.UTC(), l.Renewed.UTC(), l.Expires.UTC()
	return &l, nil
}

// readLeases reads the session's leases by agent ("" the run's): only the
// run's when run is set. One statement: the session's row left-joined to
// its leases tells a session without leases (one row of NULLs) from a
// missing one (no row), and each step lease comes with whether its agent's
// step lock is live, which makes it Alive unless released.
func (s *Store) readLeases(ctx context.Context, id string, run bool) (map[string]*coordination.RunLease, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	gone, args := false, []any{s.tenant, id}
	if s.db.brief && s.db.lockTakeover() == nil {
		gone, args = true, append(args, readGoneSilent.Milliseconds())
	}
	// The read runs its kept generic plan (keepGenericPlans), which finds
	// its rows by key (TestTheLeasesReadLooksUpItsRowsByKey), where
	// PostgreSQL planned it afresh at most calls (140-147 plans over 200
	// calls at 200 sessions, 0.5-0.9 ms each): every landing's fence
	// reads it. One round trip still, the batch an implicit transaction.
	b := &pgx.Batch{}
	b.Queue(keepGenericPlans)
	b.Queue(leasesRead(run, gone), args...)
	br := s.db.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("reading the leases of session %q: %w", id, err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("reading the leases of session %q: %w", id, err)
	}
	defer rows.Close()
	out := map[string]*coordination.RunLease{}
	found := false
	for rows.Next() {
		found = true
		var l coordination.RunLease
		var agent *string
		var start, ran *int64
		var held, dead *bool
		var version, chain *int64
		var claimed, renewed, expires *time.Time
		var owner, host *string
		var pid *int
		var released *bool
		if err := rows.Scan(&agent, &owner, &host, &pid, &start, &version, &claimed, &renewed, &expires, &released, &ran, &chain, &held, &dead); err != nil {
			return nil, fmt.Errorf("reading the leases of session %q: %w", id, err)
		}
		if agent == nil {
			continue // the session, with no lease
		}
		l.ID, l.Host, l.PID, l.ProcStart, l.Version = *owner, *host, *pid, uint64(*start), *version
		l.Claimed, l.Renewed, l.Expires = claimed.UTC(), renewed.UTC(), expires.UTC()
		l.Released, l.RanBefore, l.ChainFrom = *released, time.Duration(*ran)*time.Millisecond, *chain
		// An outage's excuse keeps a holder alive whatever its signs; a
		// step lock row of a holder gone is as dead as it is.
		s.db.excuse(&l)
		excused := l.Alive
		l.Gone = dead != nil && *dead && !excused
		l.Alive = excused || held != nil && *held && !l.Released && !l.Gone
		out[*agent] = &l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the leases of session %q: %w", id, err)
	}
	rows.Close()
	// The implicit transaction's end comes with the batch's.
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("reading the leases of session %q: %w", id, err)
	}
	if !found {
		return nil, notFound(id)
	}
	// The database answered: an outage seen is over, and the leases read
	// next have their TTL from now to be renewed (excuse).
	s.db.outage.heard(time.Now())
	return out, nil
}

// leasesRead is readLeases' statement: only the run's lease when run is
// set, and with whether each holder is gone (holderGone, $3) when gone is.
// Its four forms are built once: it is read at every landing's fence.
func leasesRead(run, gone bool) string {
	return leasesReads[b2i(run)][b2i(gone)]
}

var leasesReads = [2][2]string{
	{buildLeasesRead(false, false), buildLeasesRead(false, true)},
	{buildLeasesRead(true, false), buildLeasesRead(true, true)},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func buildLeasesRead(run, gone bool) string {
	which, held := "", `false`
	if run {
		which = ` AND l.agent_id = ''`
	}
	if gone {
		held = holderGone
	}
	return `SELECT l.agent_id, l.owner_id, l.host, l.pid, l.proc_start, l.version, l.claimed_at, l.renewed_at, l.expires_at, l.released, l.ran_before_ms, l.chain_from,
		l.agent_id <> '' AND EXISTS (SELECT 1 FROM locks k WHERE k.tenant = l.tenant AND k.session_id = l.session_id
			AND k.name = 'step:' || l.agent_id AND k.expires_at >= now()),
		` + held + `
		FROM sessions s LEFT JOIN leases l ON l.tenant = s.tenant AND l.session_id = s.id` + which + `
		WHERE s.tenant = $1 AND s.id = $2`
}

// holderGone is, in a command's read (brief) of a lease unreleased,
// whether its holder is a registered replica showing both signs a reap
// asks for (liveness.go): its liveness lock free now, and no beat for $3
// milliseconds (readGoneSilent). Reaps are made by serving replicas; with
// none left (a lone server SIGKILLed), `massgen-mcp status` read the run
// running for the lease's whole TTL. It only reads: the lock is looked
// for in pg_locks, not tried, which would hold it for a moment and make
// a replica's look take the dead one back for alive. None while an outage
// this command saw excuses leases: the database's last restart, which its
// open marks as one (restartseen.go). An outage it cannot see (a failover
// to a standby, a proxy restarted, the servers cut off from the database)
// shows the same two signs until the replicas reach the database again,
// and such a read says their runs interrupted meanwhile.
//
// readGoneSilent is longer than reapSilent by a beat and a little: a
// replica that lost its connections beats again about a second after it
// reaches the database (listen makes its connection every 500 ms, beats
// come every second), so a cut shorter than some 2 s never reads gone.
const readGoneSilent = reapSilent + reapEvery + 300*time.Millisecond

const holderGone = `COALESCE(NOT l.released AND EXISTS (SELECT 1 FROM replicas r
			WHERE r.host = l.host AND r.pid = l.pid AND r.proc_start = l.proc_start
			AND r.beat_at < now() - $3 * interval '1 millisecond'
			AND NOT EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 1
				AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND ((k.classid::int8 << 32) | k.objid::int8) = r.lock_key)), false)`

// Abandoned lists the tenant's sessions whose run lease expired unreleased
// (by the database's clock), or that were created for a run which no run
// has claimed in coordination.NeverStartedGrace since their creation ended
// (ready_at: their creator stopped between the two; no lease row at all),
// and which have neither
// finished nor been cancelled (a cancel that no resume followed): the runs
// a dead replica left, for a live one to claim. It is a cheap first look,
// made every second, and a session it lists makes the replica list the
// tenant's interrupted sessions in full; so it lists none that reads
// otherwise (a cancelled session whose run died, or whose release an
// outage kept from the store, keeps its lease unreleased for ever). The
// claim applies coordination's rules (clock skew included); a session's
// ready time is its creator's clock, so the grace is counted with
// MaxClockSkew more. A session never started has no session entry but
// usage entries (log_seq 0, or all of them usage: usage_entries, the
// criteria call of `run --criteria auto` recorded as its row was stored),
// which keeps the look from reading the setup of every session the tenant
// has (a run that ended has other entries): over 50,000 sessions it took
// 8 ms here, where the look at the leases alone took 2.5 and reading every
// setup's driver 200. Before migration 26 a session whose log held only
// its criteria spend read interrupted but was never listed.
func (s *Store) Abandoned(ctx context.Context) ([]string, error) {
	grace := (coordination.NeverStartedGrace + coordination.MaxClockSkew).Seconds()
	unfinished := (coordination.UnfinishedCreationGrace + coordination.MaxClockSkew).Seconds()
	rows, err := s.db.pool.Query(ctx, abandonedRuns, s.tenant, grace, unfinished)
	if err != nil {
		return nil, fmt.Errorf("listing abandoned runs: %w", err)
	}
	return collectStrings(rows)
}

// abandonedRuns lists a tenant's ($1) runs a dead replica left: an
// unreleased run lease past its expiry, or a session created for a run with
// no run lease and no session entry but usage entries (log_seq 0, through
// sessions_unstarted_runs, or log_seq = usage_entries, through
// sessions_spent_unstarted_runs: the two indexes' predicates, which the
// planner reads as a BitmapOr of both) whose creation ended more than $2
// seconds ago (ready_at), or, whose creation never recorded its end (NULL:
// cut short, or written by a replica of an earlier version), began more
// than $3 (coordination.UnfinishedCreationGrace; the indexes keep the
// look from reading every never-finished step-driven session's setup);
// neither finished nor cancelled without a resume since.
const abandonedRuns = `WITH left_runs AS (
			SELECT l.session_id AS id, l.expires_at AS since FROM leases l
			WHERE l.tenant = $1 AND l.agent_id = '' AND NOT l.released AND l.expires_at < now()
			UNION ALL
			SELECT s.id, coalesce(s.ready_at, s.created_at) FROM sessions s
			WHERE s.tenant = $1 AND (s.log_seq = 0 OR (s.log_seq > 0 AND s.log_seq = s.usage_entries))
			AND (s.ready_at < now() - make_interval(secs => $2) OR (s.ready_at IS NULL AND s.created_at < now() - make_interval(secs => $3)))
			AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.tenant = s.tenant AND l.session_id = s.id AND l.agent_id = '')
			AND s.setup->>'driver' = 'run')
		SELECT r.id FROM left_runs r
		WHERE NOT EXISTS (SELECT 1 FROM session_log f WHERE f.tenant = $1 AND f.session_id = r.id AND f.kind = 'finished')
		AND NOT EXISTS (SELECT 1 FROM session_log c WHERE c.tenant = $1 AND c.session_id = r.id AND c.kind = 'cancelled'
			AND NOT EXISTS (SELECT 1 FROM session_log r2 WHERE r2.tenant = c.tenant AND r2.session_id = c.session_id AND r2.kind = 'resumed' AND r2.seq > c.seq))
		ORDER BY r.since`

// writtenMax bounds the lease rows a replica keeps known: a thousand
// sessions of four agents are five thousand rows (the run's and the
// steps'); past the bound a row is let go at random, and its next change
// takes the locked path once.
const writtenMax = 16384

// written is the lease rows this replica wrote last, as stored (times to
// the microsecond, as PostgreSQL keeps them), by tenant, session and agent. It is
// only a guess at the row: changeKnown writes over it only while the row
// is still exactly it, so a stale one costs a round trip, never a wrong
// write.
type written struct {
	mu   sync.Mutex
	rows map[writtenKey]coordination.RunLease
}

type writtenKey struct{ tenant, id, agent string }

func (w *written) get(tenant, id, agent string) (coordination.RunLease, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.rows[writtenKey{tenant, id, agent}]
	return l, ok
}

func (w *written) put(tenant, id, agent string, l coordination.RunLease) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.putLocked(writtenKey{tenant, id, agent}, l)
}

// replace puts l in place of was, unless the row known now is another:
// a change made since (a claim of the agent's next step, after a landing
// that released the lease) is the newer row.
func (w *written) replace(tenant, id, agent string, was, l coordination.RunLease) {
	k := writtenKey{tenant, id, agent}
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.rows[k]; ok && cur != asStored(was) {
		return
	}
	w.putLocked(k, l)
}

// putLocked keeps l, as stored, under k; the caller holds w.mu.
func (w *written) putLocked(k writtenKey, l coordination.RunLease) {
	if w.rows == nil {
		w.rows = map[writtenKey]coordination.RunLease{}
	}
	if _, ok := w.rows[k]; !ok && len(w.rows) >= writtenMax {
		for old := range w.rows { // a map's order: one at random
			delete(w.rows, old)
			break
		}
	}
	w.rows[k] = asStored(l)
}

// asStored is l as its row reads back: times to the microsecond, and
// never Alive, Gone or CarriedFrom (a locked read has them unset).
func asStored(l coordination.RunLease) coordination.RunLease {
	l.Claimed, l.Renewed, l.Expires = stored(l.Claimed), stored(l.Renewed), stored(l.Expires)
	l.Alive, l.Gone, l.CarriedFrom = false, false, time.Time{}
	return l
}

func (w *written) drop(tenant, id, agent string) {
	w.mu.Lock()
	delete(w.rows, writtenKey{tenant, id, agent})
	w.mu.Unlock()
}

// note keeps the row a change wrote, or forgets the row after a change
// that failed: refused by its rule (the row was not what was known),
// lost, or not known to have landed.
func (w *written) note(tenant, id, agent string, l coordination.RunLease, err error) {
	if err != nil {
		w.drop(tenant, id, agent)
		return
	}
	w.put(tenant, id, agent, l)
}

// stored is t as a timestamptz keeps it: pgx sends whole microseconds,
// the rest cut off.
func stored(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// forget lets every lease row kept of a deleted session go.
func (w *written) forget(tenant, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.rows {
		if k.tenant == tenant && k.id == id {
			delete(w.rows, k)
		}
	}
}
