package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// A replica's landings commit in groups. Each landing's transaction cost
// the database more CPU in its BEGIN, COMMIT and WAL flush than in its
// statements: at 1,000 sessions, eight landings' statements queued in one
// transaction cost PostgreSQL about half the CPU a landing (278-289 µs
// against 516-602 µs, pgbench). So a landing made while landLeaders groups
// are in flight waits, and the next group takes every landing waiting (up
// to landGroupMax) into one transaction, of any session, any tenant of the
// DB: BEGIN, each landing's statements queued exactly as it sends them
// alone (landStep), one after another, COMMIT, then one NOTIFY per
// session. Each statement sees the ones before it, so two landings of one
// session count their answers in turn. A landing made with a leader free
// lands alone, as before: an idle replica's landings are not delayed.
//
// A group is all or nothing. One that fails for anything but an outage (a
// fence refusing one member, a key taken, a deadlock, a row waited for too
// long) wrote nothing, and each member lands again alone, which gives it
// its own answer: the one refused fails alone, the others land. One that
// met an outage answers every member with it, as each would have met it
// alone: a member's retry then finds whether the group committed
// (storedIs).
//
// A group's transaction, a group of one's too, waits for a row another
// transaction holds (a session's row a delete holds, a lock row held) no
// longer than landRowWait: otherwise one session's delete would hold up
// the other members of its group, and landLeaders landings waiting so
// every landing of the replica, for as long as the delete lasts. Past it
// the group raises (lock_timeout), and its members land again alone,
// outside the group, holding no leader: each waits for its own rows as
// long as they are held, as a landing always did (a landing is sent
// under no caller's cancel: land). This is the step lock takes' rule
// (stepTakeWait).
//
// Eight groups in flight, eight landings at most a group. Measured with
// the step lock takes grouped too, quiet 2-core machine, the overhead
// bench at 1,000 sessions × 4 agents over two replicas, alternated with
// the last stop's build: walls 18.1, 18.9 s against 23.8, 25.3 s;
// PostgreSQL's CPU a step 2.0 ms against 2.6-2.7 ms; landing p50 82-83 ms
// and p99 205-220 ms against 83-89 and 211-235 ms. Three groups of 48 at
// most (groups of about 20) cut the wall as much but a landing's p99 rose
// to 1.1-1.4 s, and 4 of 16 to 0.7 s: a landing waits for its group,
// whose statements run one after another on one backend, and for a group
// in flight before it. Small groups keep most of the saving (a
// transaction's cost is shared by eight) at the lone landing's latency.
const (
	landLeaders  = 8
	landGroupMax = 8
)

// landRowWait is the longest a landing sent as a group's write waits for
// a row another transaction holds: stepTakeWait, for the takes' reason
// (longer than a landing holds one, short enough that a delete does not
// hold up the replica's steps).
const landRowWait = stepTakeWait

// holdStepBounded is holdStep that first sets landRowWait for its
// transaction: set_config in its FROM runs before the fences wait for any
// row, and the statements after it in the transaction are bounded too.
var holdStepBounded = holdStep + fmt.Sprintf(` FROM set_config('lock_timeout', '%dms', true) AS lockcfg`, landRowWait.Milliseconds())

// lockWaitedOutCode is the SQLSTATE a statement raises when it waited for
// a lock longer than lock_timeout (lock_not_available). It is not an
// outage (unavailable): a group that raised it wrote nothing.
const lockWaitedOutCode = "55P03"

// waitedOut tells whether err is a row waited for past lock_timeout.
func waitedOut(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == lockWaitedOutCode
}

// stepLanding is one landing on its way: what land prepared, and what its
// transaction set. The leader of its group fills it in while its caller
// waits.
type stepLanding struct {
	ctx      context.Context // the caller's, without its cancel
	s        *Store
	l        *stepLock
	e        coordination.Entry
	snapshot []byte
	release  bool
	f        *fence

	// Set once a connection is in hand (prepare): the lock's row taken
	// from the heartbeat (release), and the lease's release (f's version).
	prepared bool
	row      heldRow
	wasHeld  bool
	rel      *leaseRelease
}

// errLandAlone answers a member of a group that did not commit for a
// reason of its own: it lands again alone.
var errLandAlone = errors.New("the landing's group did not commit; it lands alone")

// prepare takes what a landing holds from the moment its statements can
// go: as land did with the connection in hand, so a landing waiting for a
// connection waits with its lock still renewed by the heartbeat.
func (m *stepLanding) prepare() {
	s, l := m.s, m.l
	m.prepared = true
	if m.release {
		// Forgotten before the row is deleted, as unlock does, so the
		// heartbeat cannot put the row back after the commit; held again,
		// as it was taken, if the landing fails and the heartbeat held it:
		// one the heartbeat forgot (renew: reaped) stays forgotten. The
		// batch goes at once on the connection in hand, well inside the
		// lock's expiry.
		m.row, m.wasHeld = s.db.held.take(s.tenant, l.token)
	}
	if m.f != nil && m.f.version != 0 {
		m.rel = s.leaseRelease(l.id, l.agent, m.f.version)
	}
}

// unprepare gives back what prepare took, for a landing whose group did
// not commit, to land again alone as if it had never been grouped.
func (m *stepLanding) unprepare() {
	if m.wasHeld {
		m.s.db.held.add(m.s.tenant, m.l.token, m.row)
	}
	m.prepared, m.row, m.wasHeld, m.rel = false, heldRow{}, false, nil
}

// alone lands m in a transaction of its own (landStep); bounded, its row
// waits last landRowWait at most.
func (m *stepLanding) alone(bounded bool) error {
	s := m.s
	conn, err := s.db.pool.Acquire(m.ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	m.prepare()
	return s.landStep(m.ctx, conn, m.l, &m.e, m.snapshot, m.release, m.f, m.rel, bounded)
}

// landGroup is the landings' group write: a group of one lands alone, a
// larger one in one transaction (commitGroup), each with its row waits
// bounded (landRowWait).
func (db *DB) landGroup(ms []*stepLanding) []error {
	errs := make([]error, len(ms))
	if len(ms) == 1 {
		m := ms[0]
		errs[0] = m.alone(true)
		if waitedOut(errs[0]) {
			// Nothing written: it lands again outside the group.
			m.unprepare()
			errs[0] = errLandAlone
		}
		return errs
	}
	err := db.commitGroup(ms)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// commitGroup lands ms in one transaction on one connection, its members
// in (tenant, session, agent) order, so two replicas' groups take the
// rows they share (a session's, FOR SHARE) in one order, its row waits
// bounded (landRowWait). nil: all landed; errLandAlone: none did (a
// member refused, a row waited for too long), and each lands again
// alone; otherwise the outage every member met.
func (db *DB) commitGroup(ms []*stepLanding) error {
	ctx := ms[0].ctx
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// A session's fenced landings go before its others: they take the
	// session's row FOR SHARE first, so a session entry being recorded
	// (which updates that row, then perhaps the session's lock rows) waits
	// for the group, or the group for it, before the group holds any of
	// the session's lock rows, and the two never wait on each other.
	order := slices.Clone(ms)
	slices.SortFunc(order, func(a, b *stepLanding) int {
		return cmp.Or(cmp.Compare(a.s.tenant, b.s.tenant), cmp.Compare(a.l.id, b.l.id),
			cmp.Compare(unfenced(a), unfenced(b)), cmp.Compare(a.l.agent, b.l.agent))
	})
	whole := &pgx.Batch{}
	whole.Queue("BEGIN")
	landed := make([]func(bool), 0, len(order))
	var payloads []string
	for i, m := range order {
		m.prepare()
		b := &pgx.Batch{}
		// The first statement bounds the transaction's row waits.
		done, err := m.s.queueStep(b, m.l, &m.e, m.snapshot, m.release, m.f, m.rel, i == 0)
		if err != nil {
			// Its own failure, which it meets again alone, where it is
			// told apart from the group's.
			for _, m := range ms {
				m.unprepare()
			}
			for _, done := range landed {
				done(false)
			}
			return errLandAlone
		}
		whole.QueuedQueries = append(whole.QueuedQueries, b.QueuedQueries...)
		landed = append(landed, done)
		p := m.s.changePayload(m.l.id, coordination.Change{Steps: true})
		if len(payloads) == 0 || payloads[len(payloads)-1] != p {
			payloads = append(payloads, p)
		}
	}
	committed := false
	whole.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		committed = tag.String() == "COMMIT"
		return nil
	})
	// One NOTIFY a session, after the commit, as commitThenNotify sends
	// a landing's.
	whole.Queue(notifyEach, db.channel, payloads)
	err = conn.SendBatch(ctx, whole).Close()
	for _, done := range landed {
		done(committed)
	}
	if !committed {
		rollback(ctx, conn)
		if err != nil && unavailable(err) {
			return err
		}
		for _, m := range ms {
			m.unprepare()
		}
		return errLandAlone
	}
	if err != nil {
		// Committed, unheard: told again, session by session.
		var last string
		for _, m := range order {
			if k := m.s.tenant + " " + m.l.id; k != last {
				last = k
				m.s.notifyCommitted(ctx, m.l.id, coordination.Change{Steps: true})
			}
		}
	}
	return nil
}

// unfenced is 1 for a landing fenced by its lock alone, which does not
// take its session's row, 0 for one that does.
func unfenced(m *stepLanding) int {
	if m.f == nil {
		return 1
	}
	return 0
}
