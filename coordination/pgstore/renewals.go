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

// renewWindow is how long a lease renewal waits for others to go with it.
// Every running session renews its run lease every 2 s and every step
// longer than that its step lease: at a thousand sessions, 500 renewals a
// second, two round trips each, a fifth of a step's round trips. Gathered
// for 50 ms they are one transaction of two round trips for a few dozen;
// 50 ms is nothing against a lease's 10 s.
const renewWindow = 50 * time.Millisecond

// renewals gathers the replica's lease renewals into shared transactions.
// Each keeps its own rule (coordination's, the one LeaseChange.Renew
// gives) and its own answer: one whose lease was lost is told so, the
// others renew.
type renewals struct {
	mu      sync.Mutex
	pending []*renewal
	// manual leaves sending the gathered renewals (renewAll) to a test,
	// which then knows who went together instead of trusting the window.
	manual bool
	// closed is set by DB.Close, after which a renewal is refused; work
	// is every renewal goroutine (a window's send, a row renewed alone),
	// which Close waits for before it closes the pool under them.
	closed bool
	work   sync.WaitGroup
}

// errClosed answers a renewal asked of a closed store.
var errClosed = errors.New("the PostgreSQL store is closed")

type renewal struct {
	tenant, id, agent string
	rule              func(cur *coordination.RunLease) (coordination.RunLease, error)
	alone             coordination.LeaseChange // the single-row path, for a row the batch found locked
	next              coordination.RunLease
	err               error
	done              chan struct{}
	// until is when its caller stops waiting for the answer (its
	// context's deadline; zero: none). A row renewed alone is waited for
	// no longer: a heartbeat asks again at its next beat, and renewals
	// left behind by callers gone, each holding a connection of the main
	// pool while it waits for a row, piled up when the database was slow
	// (a caller gives up after a beat, a lone renewal after two) until the
	// steps found no connection.
	until time.Time
}

// renew is the store's LeaseChange for a renewal: the rule is applied with
// the others gathered in the window, and its answer waited for.
func (s *Store) renew() coordination.LeaseChange {
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		if err := live(ctx, id); err != nil {
			return coordination.RunLease{}, err
		}
		r := &renewal{tenant: s.tenant, id: id, agent: agent, rule: rule, alone: s.leases(false), done: make(chan struct{})}
		r.until, _ = ctx.Deadline()
		rs := &s.db.renewals
		rs.mu.Lock()
		if rs.closed {
			rs.mu.Unlock()
			return coordination.RunLease{}, fmt.Errorf("renewing the lease of %q in session %q: %w", agent, id, errClosed)
		}
		rs.pending = append(rs.pending, r)
		if len(rs.pending) == 1 && !rs.manual {
			rs.work.Add(1)
			time.AfterFunc(renewWindow, func() {
				defer rs.work.Done()
				s.db.renewAll()
			})
		}
		rs.mu.Unlock()
		select {
		case <-r.done:
			return r.next, r.err
		case <-ctx.Done():
			// The renewal may still be applied; the rule keeps it harmless
			// (a lease released or claimed meanwhile is not renewed).
			return coordination.RunLease{}, fmt.Errorf("renewing the lease of %q in session %q: %w", agent, id, ctx.Err())
		}
	}
}

// The gathered renewals' reads (each renewal's lease row, locked, and
// whether its session and row exist), each row looked up by its key: a
// LATERAL subquery kept apart by OFFSET 0, as the loans' reads are
// (loanreads.go), since as joins they kept the plan made when the tables
// were nearly empty, which read every lease, or every session, at every
// batch (TestBatchedStatementsLookUpTheirRowsByKey).
const (
	renewalLeasesRead = `SELECT l.tenant, l.session_id, l.agent_id, l.agent_id, l.owner_id, l.host, l.pid, l.proc_start, l.version, l.claimed_at, l.renewed_at, l.expires_at, l.released, l.ran_before_ms, l.chain_from
		FROM unnest($1::text[], $2::text[], $3::text[]) AS k(tenant, session_id, agent_id)
		CROSS JOIN LATERAL (SELECT * FROM leases l
			WHERE l.tenant = k.tenant AND l.session_id = k.session_id AND l.agent_id = k.agent_id
			OFFSET 0 FOR UPDATE SKIP LOCKED) AS l`
	renewalSessionsRead = `SELECT DISTINCT s.tenant, s.id, l.agent_id
		FROM unnest($1::text[], $2::text[], $3::text[]) AS k(tenant, id, agent_id)
		CROSS JOIN LATERAL (SELECT s.tenant, s.id FROM sessions s WHERE s.tenant = k.tenant AND s.id = k.id OFFSET 0) AS s
		LEFT JOIN LATERAL (SELECT l.agent_id FROM leases l
			WHERE l.tenant = k.tenant AND l.session_id = k.id AND l.agent_id = k.agent_id OFFSET 0) AS l ON true`
)

// renewAll applies the gathered renewals in one transaction: the rows read
// FOR UPDATE SKIP LOCKED, with the sessions' existence and which rows
// exist, alongside BEGIN; each rule applied to its row; the writes with
// COMMIT. A row another transaction holds (a claimer between its read and
// its COMMIT, however long it stalls) is passed by and renewed alone, on
// the single-row path with a timeout of its own: waiting for it here would
// hold every other row read so far and make the whole replica's renewals
// late, and its leases expire, for one stalled rival. The batch goes on
// the heartbeat's pool (DB.beats), never queued behind the steps' writes;
// a row renewed alone, which may wait seconds for its rival, takes a
// connection of the main pool instead of one of the heartbeat's two.
//
// The connection is taken before the batch: renewals gathered while a send
// waits for one (the heartbeat's pool busy, the database slow) go with it,
// instead of each later window queueing behind it as a batch of its own.
func (db *DB) renewAll() {
	ctx, cancel := context.WithTimeout(db.ctx, 2*lockBeat)
	defer cancel()
	conn, err := db.beats.Acquire(ctx)
	if err == nil {
		defer conn.Release()
	}
	db.renewals.mu.Lock()
	batch := db.renewals.pending
	db.renewals.pending = nil
	db.renewals.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	tenants, ids, agents := make([]string, len(batch)), make([]string, len(batch)), make([]string, len(batch))
	for i, r := range batch {
		tenants[i], ids[i], agents[i] = r.tenant, r.id, r.agent
	}
	type key struct{ tenant, id, agent string }
	cur := map[key]*coordination.RunLease{}
	found := map[key]bool{}  // the sessions that exist, by key{tenant, id, ""}
	stored := map[key]bool{} // the rows that exist, locked or not
	reads := &pgx.Batch{}
	reads.Queue(renewalLeasesRead, tenants, ids, agents)
	// Read after the locking one, a row it passed by shows here: one
	// inserted in between shows too and is renewed alone, which is
	// harmless (the single-row path waits for it and applies the rule).
	reads.Queue(renewalSessionsRead, tenants, ids, agents)
	read := func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var tenant, id, agent string
			l, err := scanLease(rows, &tenant, &id, &agent)
			if err != nil {
				rows.Close()
				return err
			}
			cur[key{tenant, id, agent}] = l
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var tenant, id string
			var agent *string
			if err := rows.Scan(&tenant, &id, &agent); err != nil {
				return err
			}
			found[key{tenant, id, ""}] = true
			if agent != nil {
				stored[key{tenant, id, *agent}] = true
			}
		}
		return rows.Err()
	}
	var written []*renewal
	ruled := map[*renewal]bool{} // refused by its rule, or its session missing: that answer stands
	alone := map[*renewal]bool{} // its row locked by another transaction: renewed on its own
	write := func(*pgxpool.Conn) (*pgx.Batch, error) {
		w := &pgx.Batch{}
		for _, r := range batch {
			k := key{r.tenant, r.id, r.agent}
			c := cur[k]
			if c == nil && stored[k] {
				alone[r] = true
				continue
			}
			if c == nil && !found[key{r.tenant, r.id, ""}] {
				r.err, ruled[r] = notFound(r.id), true
				continue
			}
			next, err := r.rule(c)
			if err != nil {
				r.err, ruled[r] = err, true
				continue
			}
			r.next = next
			queueLeaseWrite(w, r.tenant, r.id, r.agent, next, versionOf(c))
			cur[k] = &next // a second renewal of one lease in the batch follows the first
			written = append(written, r)
		}
		return w, nil
	}
	wrote := func(br pgx.BatchResults) error {
		for _, r := range written {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				r.err = errClaimedNow
			}
		}
		return nil
	}
	if err == nil {
		err = readThenWriteOn(ctx, conn, reads, read, write, wrote)
	}
	if err != nil {
		// A failure of the transaction (the database gone) is the answer
		// of every renewal its rule did not refuse: none was written.
		for _, r := range batch {
			if !ruled[r] && !alone[r] {
				r.next, r.err = coordination.RunLease{}, fmt.Errorf("renewing the lease of %q in session %q: %w", r.agent, r.id, err)
			}
		}
	}
	for _, r := range batch {
		if alone[r] && (r.until.IsZero() || time.Now().Before(r.until)) {
			db.renewals.work.Go(func() { r.renewAlone(db.ctx) })
			continue
		}
		if alone[r] { // its caller has stopped waiting: not renewed alone
			r.err = fmt.Errorf("renewing the lease of %q in session %q: %w", r.agent, r.id, context.DeadlineExceeded)
		}
		close(r.done)
	}
}

// closeRenewals refuses renewals from now on and waits for those under way
// (DB.Close, before the pool closes; its context has ended, so they end
// at once with an error).
func (db *DB) closeRenewals() {
	db.renewals.mu.Lock()
	db.renewals.closed = true
	db.renewals.mu.Unlock()
	db.renewals.work.Wait()
}

// renewAlone renews one lease whose row the batch found locked, waiting
// for that row as long as a batch would, or its caller does if less
// (renewal.until), but holding up no other renewal.
func (r *renewal) renewAlone(db context.Context) {
	ctx, cancel := context.WithTimeout(db, 2*lockBeat)
	defer cancel()
	if !r.until.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, r.until)
		defer stop()
	}
	r.next, r.err = r.alone(ctx, r.id, r.agent, r.rule)
	close(r.done)
}
