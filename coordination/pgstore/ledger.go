package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Ledger reads every entry of the session: its agents' entries in step
// order (every agent of the team present, if empty) and its session
// entries in seq order.
func (s *Store) Ledger(ctx context.Context, id string) (*coordination.Ledger, error) {
	sess, err := s.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	// Born: the row's created_at is the setup's, to the microsecond.
	l := &coordination.Ledger{Agents: make(map[string][]coordination.Entry, len(sess.Agents)), Born: sess.CreatedAt.Truncate(time.Microsecond)}
	for _, a := range sess.Agents {
		l.Agents[a.ID] = []coordination.Entry{}
	}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT entry FROM entries WHERE tenant = $1 AND session_id = $2 ORDER BY agent_id, step`, s.tenant, id)
	batch.Queue(`SELECT entry FROM session_log WHERE tenant = $1 AND session_id = $2 ORDER BY seq`, s.tenant, id)
	br := s.db.pool.SendBatch(ctx, batch)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	entries, err := collectJSON[coordination.Entry](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of session %q: %w", id, err)
	}
	for _, e := range entries {
		l.Agents[e.Agent] = append(l.Agents[e.Agent], e)
	}
	rows, err = br.Query()
	if err != nil {
		return nil, fmt.Errorf("reading the session entries of %q: %w", id, err)
	}
	if l.Session, err = collectJSON[coordination.SessionEntry](rows); err != nil {
		return nil, fmt.Errorf("reading the session entries of %q: %w", id, err)
	}
	s.heardFound(ctx, id, l.Session)
	return l, nil
}

// collectJSON decodes each row's one JSON column.
func collectJSON[T any](rows pgx.Rows) ([]T, error) {
	var out []T
	defer rows.Close()
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("a stored row is damaged: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// oneJSON decodes the JSON column of the one row row reads into v; found
// is false when there is no row. what names the value in errors ("the
// reply to question q of session s").
func oneJSON[T any](row pgx.Row, v *T, what string) (found bool, err error) {
	var data []byte
	err = row.Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", what, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s is damaged: %w", what, err)
	}
	return true, nil
}

func collectStrings(rows pgx.Rows) ([]string, error) {
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// AppendSession records a session entry, numbered by the session's
// counter. ctx is not consulted, as in the other stores: the entry
// recording a cancellation is written after its context ended.
func (s *Store) AppendSession(ctx context.Context, id string, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	return s.appendSession(ctx, id, e, 0, nil)
}

var _ coordination.LeasedSessionStore = (*Store)(nil)

// AppendSessionLeased is AppendSession while version is the run lease's
// claim (coordination.LeasedSessionStore): the transaction holds the run
// lease's row (massgen_hold_lease, agent ”), so a claim waits for its
// commit, and one that came first fails it.
func (s *Store) AppendSessionLeased(ctx context.Context, id string, version int64, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if version <= 0 {
		return e, fmt.Errorf("recording a %s entry of session %q: claim %d names no run lease", e.Kind, id, version)
	}
	return s.appendSession(ctx, id, e, version, nil)
}

var _ coordination.ReadFencedSessionStore = (*Store)(nil)

// AppendSessionSinceRead is AppendSession (AppendSessionLeased for a
// version other than 0) made only while the session log holds no more
// cancelled entries, and no more decided and finished ones, than read
// counted (coordination.ReadFencedSessionStore): the session lock, a row
// of the unlogged locks table, can pass to a second holder recording a
// cancel or an end while this writer still decides on what it read
// before. The count is in the write's own transaction, with the session's
// row held by its numbering (massgen_hold_unchanged).
func (s *Store) AppendSessionSinceRead(ctx context.Context, id string, version int64, read coordination.LogRead, e coordination.SessionEntry) (coordination.SessionEntry, error) {
	if version < 0 || read.Cancels < 0 || read.Ends < 0 {
		return e, fmt.Errorf("%w: recording a %s entry of session %q: claim %d, %d cancels and %d ends read; a claim is 0 (none) or more, and a count 0 or more", coordination.ErrBadInput, e.Kind, id, version, read.Cancels, read.Ends)
	}
	return s.appendSession(ctx, id, e, version, &read)
}

// appendSession writes a session entry in one round trip: one pipelined
// transaction (as a step's landing), fenced by the run lease's
// claim version unless it is 0, and by the log its decision read unless
// read is nil. The session's row first (numbering the entry), as a
// landing takes it (FOR SHARE) before its lease's; then the lease's fence
// (massgen_hold_lease, agent ”: a lost claim says so, whatever else
// changed, so the run stops as lost), then the read's
// (massgen_hold_unchanged: the row is held, so a cancel or an end being
// appended beside it either committed before the count, which sees it, or
// waits for this commit), then the entry, numbered in SQL
// from the row, its usage (and, for a spend recorded under its key, that
// key's spend taken off the step lock rows: sessionSpendRecorded); the
// notification follows the commit (commitThenNotify). The session's row before any lock row, as a fenced landing
// takes them, so the two never wait on each other. A statement that fails
// aborts the transaction and every statement after it: a refused fence
// writes nothing, not even the number.
func (s *Store) appendSession(ctx context.Context, id string, e coordination.SessionEntry, version int64, read *coordination.LogRead) (coordination.SessionEntry, error) {
	if err := coordination.CheckSessionID(id); err != nil {
		return e, err
	}
	ctx = context.WithoutCancel(ctx)
	e.Time, e.Seq = ms(e.Time), 0
	data, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("recording a %s entry of session %q: %w", e.Kind, id, err)
	}
	// The number goes where the stand-in 0 is: seq is the entry's first
	// field, whose value json.Marshal writes as a bare number.
	if !bytes.HasPrefix(data, []byte(seqKey+"0,")) {
		return e, fmt.Errorf("recording a %s entry of session %q: its encoding does not begin with its number", e.Kind, id)
	}
	tail := string(data[len(seqKey)+1:])
	b := &pgx.Batch{}
	b.Queue(`UPDATE sessions SET log_seq = log_seq + 1 WHERE tenant = $1 AND id = $2 RETURNING log_seq`, s.tenant, id).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&e.Seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		return err
	})
	if version != 0 {
		b.Queue(`SELECT massgen_hold_lease($1, $2, '', $3)`, s.tenant, id, version)
	}
	if read != nil {
		b.Queue(`SELECT massgen_hold_unchanged($1, $2, $3, $4)`, s.tenant, id, read.Cancels, read.Ends)
	}
	b.Queue(`INSERT INTO session_log (tenant, session_id, seq, kind, at, entry)
		SELECT $1, $2, log_seq, $3, $4, ($5::text || log_seq::text || $6::text)::json FROM sessions WHERE tenant = $1 AND id = $2`,
		s.tenant, id, string(e.Kind), e.Time, seqKey, tail)
	if u := e.Usage; u != nil {
		b.Queue(`INSERT INTO usage (tenant, session_id, agent_id, step, at, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_usd)
			SELECT $1, $2, '', log_seq, $3, $4, $5, $6, $7, $8 FROM sessions WHERE tenant = $1 AND id = $2`,
			s.tenant, id, e.Time, u.Input, u.CachedInput, u.Output, u.Reasoning, u.CostUSD)
	}
	if e.Spender != "" && e.Usage != nil {
		// The spend the entry records is in the ledger now: off the step
		// lock rows that count it, in the same transaction, so it is
		// counted once and at every moment.
		b.Queue(sessionSpendRecorded, s.tenant, id, e.Spender)
		b.Queue(holderlessGone, s.tenant, id)
	}
	conn, err := s.db.pool.Acquire(ctx)
	if err != nil {
		return coordination.SessionEntry{}, fmt.Errorf("recording a %s entry of session %q: %w", e.Kind, id, err)
	}
	defer conn.Release()
	err = s.commitThenNotify(ctx, conn, b, id, coordination.Change{Session: true})
	var pe *pgconn.PgError
	if unavailable(err) && !errors.As(err, &pe) {
		// The connection was lost: the COMMIT may have run. The entry
		// is in doubt until a read of the log finds it, and is told to
		// the other replicas then (unheard.go). A server's refusal
		// (read-only, disk full) wrote nothing.
		s.db.doubt(doubted{tenant: s.tenant, id: id, kind: e.Kind, at: e.Time})
	}
	switch {
	case errors.As(err, &pe) && pe.Code == leaseLostCode:
		err = fmt.Errorf("the run's claim %d is no longer current (another replica claimed the run, or it was released), so the entry is not written: %w", version, coordination.ErrLeaseLost)
	case errors.As(err, &pe) && pe.Code == changedCode:
		return coordination.SessionEntry{}, coordination.ChangedSinceRead(id, e.Kind)
	}
	if err != nil {
		return coordination.SessionEntry{}, fmt.Errorf("recording a %s entry of session %q: %w", e.Kind, id, err)
	}
	s.db.feeds.publish(s.tenant, id, coordination.Change{Session: true})
	// A fresh copy, as the ledger would read it back.
	data, _ = json.Marshal(e)
	var out coordination.SessionEntry
	_ = json.Unmarshal(data, &out)
	return out, nil
}

// seqKey begins a session entry's encoding.
const seqKey = `{"seq":`

// spendKeptGone deletes the spend a step kept in shared_spend under its
// key ($3) as it landed.
const spendKeptGone = `DELETE FROM shared_spend WHERE tenant = $1 AND session_id = $2 AND spender = $3`

const usageInsert = `INSERT INTO usage (tenant, session_id, agent_id, step, at, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_usd)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// LockStep takes an agent's step lock, or fails at once with ErrAgentBusy;
// the step number is one more than the agent's latest.
func (s *Store) LockStep(ctx context.Context, id, agent string) (coordination.StepLock, error) {
	return s.lockStep(ctx, id, agent, nil)
}

// lockStep is LockStep, with fold's claim of the step lease in the same
// batch when fold is not nil (stepfold.go).
func (s *Store) lockStep(ctx context.Context, id, agent string, fold *claimFold) (coordination.StepLock, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	if err := coordination.CheckAgentID(agent); err != nil {
		return nil, err
	}
	// The take, the numbering and the claim go in one round trip, with
	// the other takes made meanwhile on this replica (steptakes.go).
	name := "step:" + agent
	t := &stepTake{s: s, ctx: ctx, id: id, agent: agent, fold: fold, token: s.db.lockToken()}
	err := s.db.stepTakes.do(ctx, t, s.db.takeSteps)
	if errors.Is(err, errTakeAlone) {
		// Its group was rolled back (a statement raised, or a row waited
		// for longer than stepTakeWait): nothing of it was written.
		t.token, t.got, t.found = s.db.lockToken(), "", false
		if fold != nil {
			fold.claimed = false
		}
		err = s.db.sendTakes(ctx, []*stepTake{t}, false)
	}
	token, err := s.took(id, name, t.token, t.got, t.found, t.at, err)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, &coordination.BusyError{Session: id, Agent: agent}
	}
	return &stepLock{s: s, id: id, agent: agent, step: t.last + 1, token: token, dead: t.dead}, nil
}

type stepLock struct {
	s         *Store
	id, agent string
	step      int
	token     string
	dead      inherited // the spend the row carried when this took it over, to be recorded
	// shared is set once the step shared its spend (ShareSpend), which
	// keeps a row in shared_spend: its landing and its letting go delete
	// that row too. A step that never shares sends neither delete.
	shared atomic.Bool

	mu       sync.Mutex
	released bool
	appended bool
	tried    bool // an append failed for a lost connection: it may have landed
	gone     bool // the lock's row was deleted by the append that landed the step
}

// storedIs tells whether the agent's stored entry for the lock's step is e,
// byte for byte as Append encodes it (its answer number as stored: a retry
// numbers the answer again, counting the landing it is looking for).
func (s *Store) storedIs(ctx context.Context, l *stepLock, e coordination.Entry) (int, bool, error) {
	var stored string
	if err := s.db.pool.QueryRow(ctx, `SELECT entry::text FROM entries WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 AND step = $4`,
		s.tenant, l.id, l.agent, l.step).Scan(&stored); err != nil {
		return 0, false, err
	}
	var got coordination.Entry
	if err := json.Unmarshal([]byte(stored), &got); err != nil {
		return 0, false, err
	}
	e.AnswerNum = got.AnswerNum
	data, err := json.Marshal(e)
	if err != nil {
		return 0, false, err
	}
	return got.AnswerNum, string(data) == stored, nil
}

func (l *stepLock) Step() int { return l.step }

func (l *stepLock) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released {
		l.released = true
		if !l.gone {
			q := lockDelete
			if l.shared.Load() {
				q = lockDeleteShared
			}
			l.s.letGoBy(q, l.id, "step:"+l.agent, l.token)
		}
	}
}

// Append writes the agent's entry for the lock's step, fenced: only while
// the lock's row is still this lock's (a replica whose lock expired and was
// taken over writes nothing), and the ledger's key refuses the step landing
// twice. ctx is not consulted, as in the other stores: the entry of a
// cancelled step is written after its context ended.
func (l *stepLock) Append(ctx context.Context, e coordination.Entry) (coordination.Entry, error) {
	out, _, err := l.land(ctx, e, false, nil)
	return out, err
}

// AppendAndRelease is Append then Release, the lock's row deleted in the
// landing's own transaction (coordination.ReleasingStepLock): a round trip
// fewer a step. An append that fails leaves the lock held, as Append does.
func (l *stepLock) AppendAndRelease(ctx context.Context, e coordination.Entry) (coordination.Entry, error) {
	out, _, err := l.land(ctx, e, true, nil)
	if err == nil {
		l.Release()
	}
	return out, err
}

var _ coordination.UncancelledLanding = (*stepLock)(nil)

// AppendUncancelled is Append fenced by the session's cancels in the
// landing's own transaction (coordination.UncancelledLanding): a host's
// step, whose cancels the service also counts under the session lock,
// lands only while the session log holds no more cancelled entries than
// cancels. The count is of logged rows, read with the session's row held
// FOR SHARE (massgen_hold_uncancelled), so it holds even when the session
// lock, an unlogged row, has passed to a second holder recording a cancel.
func (l *stepLock) AppendUncancelled(ctx context.Context, e coordination.Entry, cancels int) (coordination.Entry, error) {
	if err := fenceArgs(l.id, l.agent, 0, cancels, false); err != nil {
		return coordination.Entry{}, err
	}
	out, _, err := l.land(ctx, e, false, &fence{cancels: cancels})
	return out, err
}

var _ coordination.LeasedLanding = (*stepLock)(nil)

// LandLeased is AppendAndRelease fenced by the agent's step lease at
// version, which the landing's transaction holds (massgen_hold_lease) and
// releases (coordination.LeasedLanding): a server step's landing in one
// round trip where the lease's read and release took two more. The same
// transaction counts the session's cancels (massgen_hold_uncancelled),
// where the service read the ledger for them. released is false when the
// lease row this replica knows was stale (or unknown): the lease is still
// the step's, and the caller releases it as before.
func (l *stepLock) LandLeased(ctx context.Context, e coordination.Entry, version int64, cancels int) (coordination.Entry, bool, error) {
	if err := fenceArgs(l.id, l.agent, version, cancels, true); err != nil {
		return coordination.Entry{}, false, err
	}
	out, released, err := l.land(ctx, e, true, &fence{cancels: cancels, version: version})
	if err == nil {
		l.Release()
	}
	return out, released, err
}

// answerKey is how an entry's answer number begins in its JSON, as
// json.Marshal writes it.
const answerKey = `"answer_number":`

// entryInsert writes a step's entry. Its JSON comes in two parts, $7 and
// $9; with $8, the agent's answer count plus one goes between them (its
// answer number), and the statement returns it (0 without $8). The number
// is returned as counted, not read back out of the stored JSON: reading
// it back decodes every escape in the entry, and PostgreSQL refuses a
// \u0000 there.
const entryInsert = `WITH n AS (SELECT CASE WHEN $8::bool THEN
		(SELECT count(*) + 1 FROM entries WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 AND kind = 'answer')
		ELSE 0 END AS n),
	ins AS (INSERT INTO entries (tenant, session_id, agent_id, step, kind, at, entry)
		SELECT $1, $2, $3, $4, $5, $6, ($7::text || CASE WHEN $8::bool THEN n.n::text ELSE '' END || $9::text)::json FROM n
		RETURNING 1)
	SELECT n.n FROM n, ins`

// fence is a landing's fences besides its lock (nil: the lock alone): the
// session's cancels when the step began, and the claim's version of the
// step lease (0: no lease, the cancels alone). LandLeased and
// AppendUncancelled refuse the values that would mean no fence
// (fenceArgs), so 0 comes only from AppendUncancelled.
type fence struct {
	cancels int
	version int64
}

// fenceArgs refuses a fence's arguments that fence nothing: a lease
// version below 1 (the first claim is 1) or a negative count of cancels.
func fenceArgs(id, agent string, version int64, cancels int, leased bool) error {
	if (leased && version < 1) || cancels < 0 {
		return fmt.Errorf("%w: the landing of agent %q in session %q was given lease version %d and %d cancels; a lease version is 1 or more, and a count of cancels 0 or more", coordination.ErrBadInput, agent, id, version, cancels)
	}
	return nil
}

// land is Append; release deletes the lock's row with the landing. f
// fences it by the session's cancels (a host's landing, which the service
// also counted under the session lock; a server step's, which it did not)
// and, with a version, by the agent's step lease, which it releases with
// the landing (released: it did, or no lease is left to release).
func (l *stepLock) land(ctx context.Context, e coordination.Entry, release bool, f *fence) (_ coordination.Entry, released bool, _ error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := coordination.CheckStepAppend(l.id, l.agent, l.step, l.released, l.appended, e); err != nil {
		return coordination.Entry{}, false, err
	}
	stage := e.Stage
	snapshot, err := stagedSnapshot(e)
	if err != nil {
		return coordination.Entry{}, false, fmt.Errorf("recording step %d of agent %q in session %q: %w", l.step, l.agent, l.id, err)
	}
	e = e.Kept()
	e.Agent, e.Step, e.Time = l.agent, l.step, ms(e.Time)
	if len(e.SeenSteps) == 0 {
		e.SeenSteps = nil
	}
	ctx = context.WithoutCancel(ctx)
	s := l.s
	// Landed in a group with the other landings of this replica in flight
	// (landgroup.go), or alone, as the group's write or after a group that
	// failed. ctx has no cancel: a landing waits for its group.
	m := &stepLanding{ctx: ctx, s: s, l: l, e: e, snapshot: snapshot, release: release, f: f}
	err = s.db.landings.do(ctx, m, s.db.landGroup)
	if errors.Is(err, errLandAlone) {
		// Outside the group, its row waits unbounded, as they always were.
		err = m.alone(false)
	}
	if !m.prepared {
		// No connection: nothing was sent, nor the lock's row taken from
		// the heartbeat.
		return coordination.Entry{}, false, fmt.Errorf("recording step %d of agent %q in session %q: %w", l.step, l.agent, l.id, err)
	}
	e = m.e
	if release {
		if err == nil {
			l.gone = true
		} else if m.wasHeld {
			s.db.held.add(s.tenant, l.token, m.row)
		}
	}
	if m.rel != nil {
		released = s.releasedWith(l, m.rel, err)
	}
	var pe *pgconn.PgError
	leaseLost, cancelled := false, false
	switch {
	case errors.As(err, &pe) && pe.Code == leaseLostCode:
		// The words of coordination's fence, which this one replaces.
		err, leaseLost = coordination.StepLeaseLost(l.id, l.agent), true
	case errors.As(err, &pe) && pe.Code == cancelledCode:
		// The words of coordination's cancel fence (which this one
		// replaces for a server step, and doubles for a host's).
		err, cancelled = coordination.CancelledMidStep(l.id, l.agent, l.step), true
	case errors.As(err, &pe) && pe.Code == lockLostCode:
		err = fmt.Errorf("the step lock of agent %q in session %q expired and was taken by another replica; this step is not recorded: %w", l.agent, l.id, coordination.ErrLeaseLost)
	case errors.As(err, &pe) && pe.Code == "23505" && pe.TableName == "entries":
		err = fmt.Errorf("step %d of agent %q in session %q is already recorded (by another replica): %w", e.Step, l.agent, l.id, coordination.ErrLeaseLost)
	}
	if err != nil && (errors.Is(err, coordination.ErrLeaseLost) || cancelled) && l.tried {
		// A retry after a connection lost at the commit: the step may have
		// landed then. An identical stored entry is that landing, not
		// another replica's. (Its lock row, if that commit deleted it, is
		// deleted again by Release: harmless.) A cancel recorded since
		// (during the outage) refuses only a step that had not landed.
		// A lease fence that refused it (the lease released) was refused
		// by that landing's own release: there is none left to release.
		// A read that finds the database gone again leaves the question
		// open: the outage's error, so the landing is tried again rather
		// than given up as another replica's. Found, it is told to the
		// other replicas again: its NOTIFY follows its COMMIT
		// (commitThenNotify), and a connection lost between the two left
		// it committed unheard.
		switch num, same, serr := s.storedIs(ctx, l, e); {
		case serr == nil && same:
			e.AnswerNum, err, released = num, nil, leaseLost
			s.notifyCommitted(ctx, l.id, coordination.Change{Steps: true})
		case serr != nil && unavailable(serr):
			err, leaseLost, cancelled = serr, false, false
		}
	}
	if err != nil {
		l.tried = l.tried || unavailable(err)
		if leaseLost || cancelled {
			return coordination.Entry{}, false, err
		}
		return coordination.Entry{}, false, fmt.Errorf("recording step %d of agent %q in session %q: %w", l.step, l.agent, l.id, err)
	}
	l.appended = true
	s.placeStage(stage, l.step)
	s.db.feeds.publish(s.tenant, l.id, coordination.Change{Steps: true})
	// The caller's own copy, as a later read returns it (e is already
	// what was stored: kept fields, the time in UTC to the millisecond).
	return e.Clone(), released, nil
}

// changedCode is the SQLSTATE massgen_hold_unchanged fails with when the
// session was cancelled or decided since the writer read its log
// (migrations/0019_unchanged_since_read.sql).
const changedCode = "MGL04"

// leaseLostCode is the SQLSTATE massgen_hold_lease fails with when the
// step lease is no longer the claim's (migrations/0005_leased_landing.sql).
const leaseLostCode = "MGL02"

// cancelledCode is the SQLSTATE massgen_hold_uncancelled fails with when
// the session was cancelled since the step began
// (migrations/0006_uncancelled_landing.sql; 0007_uncancelled_share.sql
// has it wait for a cancel being recorded beside it).
const cancelledCode = "MGL03"

// leaseRelease is a landing's fence by its step lease, and the lease's
// release: coordination's rule (ReleaseStepLease, the Go clock) applied to
// the row this replica wrote last, written by the compare-all-columns
// UPDATE of the known-row path (changeKnownSQL). Without a known row, or
// one the rule refuses, only the fence goes.
type leaseRelease struct {
	version   int64
	known     bool
	cur, next coordination.RunLease
	done      bool // the UPDATE changed the row (in a transaction that may yet fail)
}

func (s *Store) leaseRelease(id, agent string, version int64) *leaseRelease {
	r := &leaseRelease{version: version}
	if cur, ok := s.db.written.get(s.tenant, id, agent); ok {
		if next, err := coordination.ReleaseStepLease(id, agent, &cur, version, time.Now()); err == nil {
			r.cur, r.next, r.known = cur, next, true
		}
	}
	return r
}

// releasedWith keeps the known lease row after a leased landing that
// ended with err, and tells whether it released the lease. A landing that
// landed without the UPDATE (the known row stale, the fence held: the
// lease is still the step's) or failed (lost, fenced off, or not known to
// have landed) leaves the row unknown; its next change reads it.
func (s *Store) releasedWith(l *stepLock, r *leaseRelease, err error) bool {
	if err == nil && r.done {
		// The commit let the agent's lock and lease go: its next step may
		// have claimed the lease already, and that row is the newer.
		s.db.written.replace(s.tenant, l.id, l.agent, r.cur, r.next)
		return true
	}
	s.db.written.drop(s.tenant, l.id, l.agent)
	return false
}

// lockLostCode is the SQLSTATE massgen_hold_lock fails with when another
// holder has the lock's row (migrations/0004_landing.sql).
const lockLostCode = "MGL01"

// holdStep is a landing's fences in one statement
// (migrations/0027_step_holds.sql): massgen_hold_uncancelled's,
// massgen_hold_lease's and massgen_hold_lock's, in that order, with their
// SQLSTATEs; a NULL count of cancels or lease version skips that fence.
const holdStep = `SELECT massgen_hold_step($1, $2, $3, $4, $5, $6, $7, $8)`

// landStep writes a step's entry in one round trip: one pipelined
// transaction, the fences first, one statement (holdStep), then the entry
// (numbered, if it is an answer without a number: e.AnswerNum is set), the
// snapshot, the usage, and with release the lock row's delete; the
// notification follows its commit (commitThenNotify).
// A fenced landing (f: a leased landing, a host's) is fenced first by the
// cancels (no cancelled entry since the step began, counted with the
// session's row held FOR SHARE); a leased one (rel, made from f's version)
// then by the lease (the step lease row held, still the claim's and
// unreleased), which the statement after the fences releases; every
// landing then by its lock (the lock's row is this lock's, or taken back if
// the database lost it). A statement that fails aborts the transaction and
// every statement after it: nothing lands without the lock, nor without
// the lease. bounded: its row waits last landRowWait at most.
func (s *Store) landStep(ctx context.Context, conn *pgxpool.Conn, l *stepLock, e *coordination.Entry, snapshot []byte,
	release bool, f *fence, rel *leaseRelease, bounded bool) error {
	b := &pgx.Batch{}
	landed, err := s.queueStep(b, l, e, snapshot, release, f, rel, bounded)
	if err != nil {
		return err
	}
	err = s.commitThenNotify(ctx, conn, b, l.id, coordination.Change{Steps: true})
	landed(err == nil)
	return err
}

// queueStep queues a landing's statements (landStep's) on b. landed, called
// once the transaction ended, sets e's answer number: the one counted if it
// committed, back to none if not. bounded: its first statement sets
// landRowWait for the transaction (holdStepBounded).
func (s *Store) queueStep(b *pgx.Batch, l *stepLock, e *coordination.Entry, snapshot []byte,
	release bool, f *fence, rel *leaseRelease, bounded bool) (landed func(committed bool), _ error) {
	count := e.Kind == coordination.KindAnswer && e.AnswerNum == 0
	if count {
		e.AnswerNum = 1 // a stand-in: the statement writes the count there
	}
	data, err := json.Marshal(e)
	if err != nil {
		if count {
			e.AnswerNum = 0
		}
		return nil, err
	}
	head, tail := string(data), ""
	if count {
		// The first answerKey is the entry's own: the fields before it are
		// strings, whose quotes json.Marshal escapes, and numbers.
		i := strings.Index(head, answerKey+"1")
		if i < 0 {
			e.AnswerNum = 0
			return nil, fmt.Errorf("the entry of step %d has no answer number to fill in", e.Step)
		}
		head, tail = head[:i+len(answerKey)], head[i+len(answerKey)+1:]
	}
	name := "step:" + l.agent
	u := e.Usage
	// The fences, one statement (massgen_hold_step), in this order: the
	// cancels first (f), as a session cancelled (and perhaps resumed, its
	// new run claiming this step's lease) refuses the step as cancelled,
	// which tells its caller to resume and records the model's spend,
	// rather than as a lost lease; then the lease (rel), held until the
	// commit; then the lock. A NULL skips a fence the landing has not.
	var cancels *int
	var version *int64
	if f != nil {
		cancels = &f.cancels
	}
	if rel != nil {
		version = &rel.version
	}
	hold := holdStep
	if bounded {
		hold = holdStepBounded
	}
	b.Queue(hold, s.tenant, l.id, cancels, l.agent, version, name, l.token, lockTTL.Milliseconds())
	if rel != nil && rel.known {
		// The lease's release (known row), in the same transaction, its
		// row held since the fence.
		b.Queue(changeKnownSQL, changeKnownArgs(s.tenant, l.id, l.agent, rel.cur, rel.next)...).Exec(func(tag pgconn.CommandTag) error {
			rel.done = tag.RowsAffected() == 1
			return nil
		})
	}
	var num int
	b.Queue(entryInsert, s.tenant, l.id, l.agent, e.Step, string(e.Kind), e.Time, head, count, tail).QueryRow(func(row pgx.Row) error {
		return row.Scan(&num)
	})
	if snapshot != nil {
		b.Queue(`INSERT INTO snapshots (tenant, session_id, agent_id, step, manifest) VALUES ($1, $2, $3, $4, $5)`,
			s.tenant, l.id, l.agent, e.Step, snapshot)
	}
	b.Queue(usageInsert, s.tenant, l.id, l.agent, e.Step, e.Time, u.Input, u.CachedInput, u.Output, u.Reasoning, u.CostUSD)
	if l.shared.Load() {
		// The step's spend is in its usage now: its shared_spend row goes
		// in the same transaction, so a crash after the landing leaves no
		// spend of it to record again. Not sent for a step that never
		// shared, which has no row.
		b.Queue(spendKeptGone, s.tenant, l.id, l.token)
	}
	if release {
		b.Queue(lockDelete, s.tenant, l.id, name, l.token)
	}
	return func(committed bool) {
		switch {
		case !count:
		case committed:
			e.AnswerNum = num
		default:
			e.AnswerNum = 0
		}
	}, nil
}

var _ coordination.ToolLog = (*Store)(nil)

// WriteToolLog stores a landed step's tool records, replacing any before.
func (s *Store) WriteToolLog(ctx context.Context, id, agent string, step int, recs []providers.ToolRecord) error {
	if err := live(ctx, id); err != nil {
		return err
	}
	if err := coordination.CheckAgentID(agent); err != nil {
		return err
	}
	if recs == nil {
		recs = []providers.ToolRecord{}
	}
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO tool_records (tenant, session_id, agent_id, step, records)
		SELECT $1, $2, $3, $4, $5 FROM entries WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 AND step = $4
		ON CONFLICT (tenant, session_id, agent_id, step) DO UPDATE SET records = EXCLUDED.records`, s.tenant, id, agent, step, data)
	if err != nil {
		return fmt.Errorf("storing the tool calls of step %d of agent %q in session %q: %w", step, agent, id, err)
	}
	if tag.RowsAffected() == 0 {
		if err := s.exists(ctx, s.db.pool, id); err != nil {
			return err
		}
		return fmt.Errorf("step %d of agent %q in session %q is not recorded: %w", step, agent, id, coordination.ErrBadInput)
	}
	return nil
}

// ToolLog reads a step's tool records; none for a step that made no call.
func (s *Store) ToolLog(ctx context.Context, id, agent string, step int) ([]providers.ToolRecord, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	var data []byte
	err := s.db.pool.QueryRow(ctx, `SELECT records FROM tool_records WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 AND step = $4`,
		s.tenant, id, agent, step).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tool calls of step %d of agent %q in session %q: %w", step, agent, id, err)
	}
	var recs []providers.ToolRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("the tool calls of step %d of agent %q in session %q are stored damaged: %w", step, agent, id, err)
	}
	return recs, nil
}
