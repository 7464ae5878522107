package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// AppendEvent adds one line to the session's timeline. It returns once the
// line is written (committed, as every event is, without waiting for the
// WAL flush), with its own error. Events appended while another write of
// events is in flight go together in the next (eventWriter).
func (s *Store) AppendEvent(ctx context.Context, id string, ev coordination.Event) error {
	if err := coordination.CheckSessionID(id); err != nil {
		return err
	}
	ev.Time = ms(ev.Time)
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding an event of session %q: %w", id, err)
	}
	// ctx's end is not heeded, as before: an event of a cancelled step is
	// written after its context ended, and the group's write belongs to no
	// one caller.
	if err := s.db.events.do(context.WithoutCancel(ctx), queuedEvent{s.tenant, id, ev.Time, string(data)}, s.db.writeEvents); err != nil {
		return fmt.Errorf("adding an event to session %q: %w", id, err)
	}
	s.db.feeds.publish(s.tenant, id, coordination.Change{Events: true})
	return nil
}

// eventWriteLimit bounds a group's write: every event of the replica waits
// behind it. A lease outlives it (lockTTL) only just: a write that long is
// an outage, which the run's own writes report.
const eventWriteLimit = 3 * lockTTL

// eventWriter is a replica's timeline writes, grouped: an event appended
// while another write of events is in flight goes in the next, with every
// other waiting then (group.go).
type eventWriter = group[queuedEvent]

// queuedEvent is an event waiting for the group it goes in.
type queuedEvent struct {
	tenant, id string
	at         time.Time
	event      string // JSON
}

// eventsInsert writes a group of events in one statement, so one round
// trip: a timeline event marks a step's start and its landing, and a
// thousand sessions' steps sent them one by one at two round trips a step.
// The timeline is not protocol state (the file store does not fsync it
// either): set_config makes the commit not wait for the WAL flush. Only
// events of stored sessions go in. Each session with an event gets one
// NOTIFY, its payload as changePayload writes it ("<tenant> <session> e"),
// delivered only when the events commit; the rows returned are those
// sessions, so an event of a session not among them found no session.
//
// A session's events are numbered (n) 1, 2, 3, … in the order they commit
// (migration 23): the statement adds its count of each session's events
// to the session's row of event_counters and numbers them, in the order
// they were appended, up to the new last. The row stays locked until the
// commit, so another replica writing events of the session at the same
// time waits for this write and numbers after it: a reader never sees a
// session's later event without the earlier ones, and the count of a
// session's events is its last number at any snapshot (a status cursor
// counts events). The rows are taken in (tenant, session_id) order, so two
// replicas' groups of the same sessions never deadlock.
//
// Each session is looked up by its key (LATERAL, kept apart by OFFSET 0),
// as the loans' reads are (loanreads.go): as a join, the plan kept from
// when the table was nearly empty read every session at every group. The
// lookup takes the KEY SHARE the foreign key's check would take, SKIP
// LOCKED: a session being deleted (its row held FOR UPDATE until the
// delete commits, a prune's measure and deletes included) is left out and
// its events answered as of a session not stored, where the check would
// have held the whole group, every tenant's events of this replica, until
// the delete ended; nor is its counter touched, which the delete removes.
// Only a delete takes a session's row FOR UPDATE; a setup's rewrite takes
// NO KEY UPDATE, which KEY SHARE does not wait for
// (TestCriteriaBeingSetHoldUpNoEvents).
const eventsInsert = `WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true)),
	k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) WITH ORDINALITY AS k(tenant, session_id, at, event, ord)),
	stored AS MATERIALIZED (SELECT g.tenant, g.session_id, g.count
		FROM (SELECT tenant, session_id, count(*) AS count FROM k GROUP BY tenant, session_id) g
		CROSS JOIN LATERAL (SELECT 1 FROM sessions s WHERE s.tenant = g.tenant AND s.id = g.session_id OFFSET 0 FOR KEY SHARE SKIP LOCKED) AS s),
	counted AS (INSERT INTO event_counters AS c (tenant, session_id, last)
		SELECT st.tenant, st.session_id, st.count FROM stored st CROSS JOIN cfg
		ORDER BY st.tenant, st.session_id
		ON CONFLICT (tenant, session_id) DO UPDATE SET last = c.last + EXCLUDED.last
		RETURNING c.tenant, c.session_id, c.last),
	ins AS (INSERT INTO events (tenant, session_id, n, at, event)
		SELECT k.tenant, k.session_id,
			w.last - count(*) OVER (PARTITION BY k.tenant, k.session_id) + row_number() OVER (PARTITION BY k.tenant, k.session_id ORDER BY k.ord),
			k.at, k.event::json
		FROM k JOIN counted w ON w.tenant = k.tenant AND w.session_id = k.session_id)
	SELECT w.tenant, w.session_id, pg_notify($5, w.tenant || ' ' || w.session_id || ' e')
	FROM counted w`

// writeEvents writes a group of events (the eventWriter's write) and
// answers each on its own. A session not stored fails only its own
// events. A statement that fails (a session deleted meanwhile, an event
// PostgreSQL refuses) is written again one event at a time, in the same
// order, so one bad event fails alone; unless the database could not be
// reached, when the group may have committed before the connection was
// lost, or the write ran out of time or was ended by Close, and every
// event is told so rather than written twice.
func (db *DB) writeEvents(evs []queuedEvent) []error {
	errs := make([]error, len(evs))
	err := db.insertEvents(evs, errs)
	if err == nil {
		return errs
	}
	if len(evs) == 1 || unavailable(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i := range evs {
		if err := db.insertEvents(evs[i:i+1], errs[i:i+1]); err != nil {
			errs[i] = err
		}
	}
	return errs
}

// insertEvents sends eventsInsert for evs and sets the error of each event
// whose session is not stored; it returns the statement's own error.
func (db *DB) insertEvents(evs []queuedEvent, errs []error) error {
	tenants, ids, ats, data := make([]string, len(evs)), make([]string, len(evs)), make([]time.Time, len(evs)), make([]string, len(evs))
	for i, ev := range evs {
		tenants[i], ids[i], ats[i], data[i] = ev.tenant, ev.id, ev.at, ev.event
	}
	type key struct{ tenant, id string }
	stored := map[key]bool{}
	// The group's write is no one caller's: no caller's end cancels it.
	// Close does, and a write that hangs (a database gone silent) ends at
	// eventWriteLimit, so the replica's later events are not held forever.
	ctx, cancel := context.WithTimeout(db.ctx, eventWriteLimit)
	defer cancel()
	// The group's write runs its kept generic plan (keepGenericPlans): one
	// round trip still, the batch an implicit transaction.
	b := &pgx.Batch{}
	b.Queue(keepGenericPlans)
	b.Queue(eventsInsert, tenants, ids, ats, data, db.channel)
	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.tenant, &k.id, nil); err != nil {
			rows.Close()
			return err
		}
		stored[k] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// The commit's own answer comes with the batch's end.
	if err := br.Close(); err != nil {
		return err
	}
	for i, ev := range evs {
		if !stored[key{ev.tenant, ev.id}] {
			errs[i] = notFound(ev.id)
		}
	}
	return nil
}

// Events reads the session's timeline, oldest first: in the order its
// events committed (eventsInsert).
func (s *Store) Events(ctx context.Context, id string) ([]coordination.Event, error) {
	if err := live(ctx, id); err != nil {
		return nil, err
	}
	if err := s.exists(ctx, s.db.pool, id); err != nil {
		return nil, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT event FROM events WHERE tenant = $1 AND session_id = $2 ORDER BY n`, s.tenant, id)
	if err != nil {
		return nil, fmt.Errorf("reading the timeline of session %q: %w", id, err)
	}
	evs, err := collectJSON[coordination.Event](rows)
	if err != nil {
		return nil, fmt.Errorf("reading the timeline of session %q: %w", id, err)
	}
	if evs == nil {
		evs = []coordination.Event{}
	}
	return evs, nil
}
