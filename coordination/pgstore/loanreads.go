package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// loanAsk is one loan's read (readOn): where the kept ledger ends, and,
// once read, the rows past it. Loans of different sessions asked for while
// a read is in flight go together in the next (DB.loanReads): at a thousand
// running sessions a step's two loans were a fifth of its round trips, each
// three statements for a handful of rows.
type loanAsk struct {
	tenant, id string
	first      bool // nothing kept yet: the setup too, and every entry
	held       bool // LendState: the held step locks too
	agents     []string
	lasts      []int32 // each agent's last step kept, 0 for none (not first)
	logAfter   int32   // the last session entry's seq kept

	// The answer. found: the session's row exists; damaged: one of its
	// rows does not decode (this session's failure, not the others').
	found     bool
	created   time.Time
	setup     []byte
	locked    []string
	holds     []coordination.SpendHold // held: the calls' holds on its budget
	entries   []coordination.Entry
	weight    int64
	log       []coordination.SessionEntry
	logWeight int64
	damaged   error
}

// The loans' batch read, a statement a table (readLoans). Each ask's rows
// are read by a lookup of their table's key, never by a join the planner
// may choose to make by scanning the table: each is a LATERAL subquery
// kept apart by OFFSET 0 (which stops PostgreSQL from pulling it up into a
// plain join), so it runs once per ask, on the key's index. As plain
// joins they were planned by what the planner knew of the tables when pgx
// first prepared them on a connection, nearly empty, and PostgreSQL keeps
// that generic plan until the tables are analysed (CI runs without
// autovacuum): a hash join over the whole table at every batch, at 1,000
// sessions 10,910 entries scanned for one ask's row, 4.6 ms a read, the
// most time of any statement in pg_stat_statements
// (TestBatchedStatementsLookUpTheirRowsByKey).
const (
	// loanSessionsRead: the session rows, with the step locks held and
	// the calls' holds on the session's budget not expired (spend_holds,
	// as HoldSpend counts them): a run's launch counts the other
	// replicas' in the read it launches from, at no round trip of its own.
	// An aggregate over no rows is one row of nulls, so a session without
	// holds is still read.
	loanSessionsRead = `SELECT r.i, s.created_at, CASE WHEN r.first THEN s.setup END,
		CASE WHEN r.held THEN ARRAY(SELECT substr(l.name, 6) FROM locks l WHERE l.tenant = s.tenant AND l.session_id = s.id
			AND l.name LIKE 'step:%' AND l.expires_at >= now()) END,
		h.holders, h.costs, h.tokens
		FROM unnest($1::text[], $2::text[], $3::bool[], $4::bool[]) WITH ORDINALITY AS r(tenant, id, first, held, i)
		CROSS JOIN LATERAL (SELECT s.tenant, s.id, s.created_at, s.setup FROM sessions s
			WHERE s.tenant = r.tenant AND s.id = r.id OFFSET 0) AS s
		CROSS JOIN LATERAL (SELECT array_agg(h.holder ORDER BY h.holder) AS holders, array_agg(h.cost_usd ORDER BY h.holder) AS costs,
				array_agg(h.tokens ORDER BY h.holder) AS tokens
			FROM spend_holds h WHERE r.held AND h.tenant = s.tenant AND h.session_id = s.id AND h.expires_at > now()) AS h`
	// loanEntriesRead: for a loan that keeps a ledger, each agent's rows
	// past its last kept (a range of the key's index); for a first read,
	// all.
	loanEntriesRead = `SELECT u.i, u.entry FROM (
			SELECT k.i, e.agent_id, e.step, e.entry
			FROM unnest($3::int8[], $4::text[], $5::int[]) AS k(i, agent, last)
			CROSS JOIN LATERAL (SELECT e.agent_id, e.step, e.entry FROM entries e
				WHERE e.tenant = ($1::text[])[k.i] AND e.session_id = ($2::text[])[k.i]
					AND e.agent_id = k.agent AND e.step > k.last OFFSET 0) AS e
			UNION ALL
			SELECT r.i, e.agent_id, e.step, e.entry
			FROM unnest($1::text[], $2::text[], $6::bool[]) WITH ORDINALITY AS r(tenant, id, first, i)
			CROSS JOIN LATERAL (SELECT e.agent_id, e.step, e.entry FROM entries e
				WHERE e.tenant = r.tenant AND e.session_id = r.id OFFSET 0) AS e
			WHERE r.first) AS u
		ORDER BY u.i, u.agent_id, u.step`
	// loanLogRead: the session entries past each ask's last kept.
	loanLogRead = `SELECT r.i, l.entry
		FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS r(tenant, id, after, i)
		CROSS JOIN LATERAL (SELECT l.seq, l.entry FROM session_log l
			WHERE l.tenant = r.tenant AND l.session_id = r.id AND l.seq > r.after OFFSET 0) AS l
		ORDER BY r.i, l.seq`
)

// keepGenericPlans, sent first in a batch (an implicit transaction, to its
// Sync), makes the batch's later statements run the generic plan each
// connection keeps for them, where PostgreSQL would plan them afresh at
// every call. A statement that reads its asks from arrays (unnest) gets a
// generic plan priced for 100 rows an array, and a custom plan priced for
// the handful it is given, so the plan cache chooses a custom plan, and
// plans, every time: at 200 sessions the loans' three reads were planned
// at every call, 0.1-0.3 ms each, and planning was about a fifth of
// PostgreSQL's time a step (pg_stat_statements, docs/BENCHMARKS.md). Their
// generic plans look each row up by its key
// (TestBatchedStatementsLookUpTheirRowsByKey), as good as a custom plan
// for any number of asks (TestTheLoansAndEventsKeepTheirPlans). The
// setting is local to the transaction: a statement sent later on the
// connection plans as it did.
const keepGenericPlans = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// readLoans reads the rows past every ask's kept ledger in one round trip
// (the loans' batch read). Each statement reads all the sessions, matched to their
// asks by position (WITH ORDINALITY, 1-based), so two asks of one session
// each get their own rows. The statements keep the order a single loan
// read them in (LendState relies on it): the session rows with their step
// locks first, then the entries, then the session entries; each sees every
// write committed before it began, which is after every ask in it was made.
func (db *DB) readLoans(ctx context.Context, asks []*loanAsk) []error {
	n := len(asks)
	tenants, ids := make([]string, n), make([]string, n)
	firsts, helds := make([]bool, n), make([]bool, n)
	logAfters := make([]int32, n)
	// The agents' arrays are made at their length, not grown: none (nil,
	// sent as NULL, as before) when no ask names an agent.
	agents := 0
	for _, a := range asks {
		agents += len(a.agents)
	}
	var kAsk []int64
	var kAgents []string
	var kLasts []int32
	if agents > 0 {
		kAsk, kAgents, kLasts = make([]int64, 0, agents), make([]string, 0, agents), make([]int32, 0, agents)
	}
	for i, a := range asks {
		tenants[i], ids[i], firsts[i], helds[i], logAfters[i] = a.tenant, a.id, a.first, a.held, a.logAfter
		for j, agent := range a.agents {
			kAsk, kAgents, kLasts = append(kAsk, int64(i+1)), append(kAgents, agent), append(kLasts, a.lasts[j])
		}
	}
	b := &pgx.Batch{}
	b.Queue(keepGenericPlans)
	b.Queue(loanSessionsRead, tenants, ids, firsts, helds)
	b.Queue(loanEntriesRead, tenants, ids, kAsk, kAgents, kLasts, firsts)
	b.Queue(loanLogRead, tenants, ids, logAfters)
	errs := make([]error, n)
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return fail(err)
	}
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var i int64
		var created time.Time
		var setup []byte
		var locked, holders []string
		var costs []float64
		var tokens []int64
		if err := rows.Scan(&i, &created, &setup, &locked, &holders, &costs, &tokens); err != nil {
			rows.Close()
			return fail(err)
		}
		a := asks[i-1]
		a.found, a.created, a.setup, a.locked = true, created, setup, locked
		a.holds = nil
		for j, k := range holders { // three aggregates of the same rows, in one order
			a.holds = append(a.holds, coordination.SpendHold{Key: k, Cost: costs[j], Tokens: tokens[j]})
		}
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if err := routeRows(br, asks, func(a *loanAsk, e coordination.Entry, w int64) {
		a.entries, a.weight = append(a.entries, e), a.weight+w
	}); err != nil {
		return fail(err)
	}
	if err := routeRows(br, asks, func(a *loanAsk, e coordination.SessionEntry, w int64) {
		a.log, a.logWeight = append(a.log, e), a.logWeight+w
	}); err != nil {
		return fail(err)
	}
	return errs
}

// routeRows reads the batch's next result, rows of (ask's position, JSON),
// decoding each into its ask with its weight (its JSON's length: what the
// kept loans are weighed by, loansBytesMax). A row that does not decode
// damages its own session's read only.
func routeRows[T any](br pgx.BatchResults, asks []*loanAsk, add func(*loanAsk, T, int64)) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		var data []byte
		if err := rows.Scan(&i, &data); err != nil {
			return err
		}
		a := asks[i-1]
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			if a.damaged == nil {
				a.damaged = fmt.Errorf("a stored row is damaged: %w", err)
			}
			continue
		}
		add(a, v, int64(len(data)))
	}
	return rows.Err()
}
