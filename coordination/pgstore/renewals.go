package pgstore

import (
	"context"
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
}

type renewal struct {
	tenant, id, agent string
	rule              func(cur *coordination.RunLease) (coordination.RunLease, error)
	next              coordination.RunLease
	err               error
	done              chan struct{}
}

// renew is the store's LeaseChange for a renewal: the rule is applied with
// the others gathered in the window, and its answer waited for.
func (s *Store) renew() coordination.LeaseChange {
	return func(ctx context.Context, id, agent string, rule func(cur *coordination.RunLease) (coordination.RunLease, error)) (coordination.RunLease, error) {
		if err := live(ctx, id); err != nil {
			return coordination.RunLease{}, err
		}
		r := &renewal{tenant: s.tenant, id: id, agent: agent, rule: rule, done: make(chan struct{})}
		rs := &s.db.renewals
		rs.mu.Lock()
		rs.pending = append(rs.pending, r)
		if len(rs.pending) == 1 {
			time.AfterFunc(renewWindow, func() { s.db.renewAll() })
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

// renewAll applies the gathered renewals in one transaction: the rows read
// FOR UPDATE in key order (two such transactions never wait on each other
// in a cycle), with the sessions' existence, alongside BEGIN; each rule
// applied to its row; the writes with COMMIT.
func (db *DB) renewAll() {
	db.renewals.mu.Lock()
	batch := db.renewals.pending
	db.renewals.pending = nil
	db.renewals.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*lockBeat)
	defer cancel()
	tenants, ids, agents := make([]string, len(batch)), make([]string, len(batch)), make([]string, len(batch))
	for i, r := range batch {
		tenants[i], ids[i], agents[i] = r.tenant, r.id, r.agent
	}
	type key struct{ tenant, id, agent string }
	cur := map[key]*coordination.RunLease{}
	found := map[key]bool{} // the sessions that exist, by key{tenant, id, ""}
	reads := &pgx.Batch{}
	reads.Queue(`SELECT l.tenant, l.session_id, l.agent_id, l.agent_id, l.owner_id, l.host, l.pid, l.proc_start, l.version, l.claimed_at, l.renewed_at, l.expires_at, l.released
		FROM leases l JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(tenant, session_id, agent_id) USING (tenant, session_id, agent_id)
		ORDER BY l.tenant, l.session_id, l.agent_id FOR UPDATE OF l`, tenants, ids, agents)
	reads.Queue(`SELECT DISTINCT s.tenant, s.id FROM sessions s
		JOIN unnest($1::text[], $2::text[]) AS k(tenant, id) USING (tenant, id)`, tenants, ids)
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
			if err := rows.Scan(&tenant, &id); err != nil {
				return err
			}
			found[key{tenant, id, ""}] = true
		}
		return rows.Err()
	}
	var written []*renewal
	ruled := map[*renewal]bool{} // refused by its rule, or its session missing: that answer stands
	write := func(*pgxpool.Conn) (*pgx.Batch, error) {
		w := &pgx.Batch{}
		for _, r := range batch {
			k := key{r.tenant, r.id, r.agent}
			c := cur[k]
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
	if err := db.readThenWrite(ctx, reads, read, write, wrote); err != nil {
		// A failure of the transaction (the database gone) is the answer
		// of every renewal its rule did not refuse: none was written.
		for _, r := range batch {
			if !ruled[r] {
				r.next, r.err = coordination.RunLease{}, fmt.Errorf("renewing the lease of %q in session %q: %w", r.agent, r.id, err)
			}
		}
	}
	for _, r := range batch {
		close(r.done)
	}
}
