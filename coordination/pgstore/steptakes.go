package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A step lock's take (lockStep) is one implicit transaction: the take, the
// step's numbering and, for a server step, its lease's claim, whose
// durable commit the database pays for each. PostgreSQL's cost of a
// transaction outweighs its statements' (in pgbench, the statements of
// eight landings in one transaction cost about half the CPU a landing of
// one transaction each did), and at a thousand sessions the database's CPU sets the wall, so the
// takes made while one is in flight go together in the next, from any
// session and tenant of the replica (stepTakes, a group commit, group.go).
//
// group, not batch: a take is a write whose answer its caller must have
// (a take that committed for a caller that stopped listening would hold
// the agent's lock, renewed by the heartbeat, for good), and group answers
// every caller; and one group in flight gathers the most takes in each,
// which is the point. A take's context bounds its wait for a group
// (group.do: one whose context ends while queued is never sent); what it
// no longer bounds once in a group, the group's time limit
// (stepTakeLimit) does, and what one member's row wait would cost the
// replica's other takes, a lock_timeout (stepTakeWait).

// stepTakes is a replica's step lock takes, grouped.
type stepTakes = group[*stepTake]

// stepTake is one step lock's take and, once sent, its answers.
type stepTake struct {
	s         *Store
	ctx       context.Context // the caller's: a group of one is sent under it, as a take alone always was
	id, agent string
	fold      *claimFold // the step lease's claim sent with it (stepfold.go); nil: none
	token     string

	got   string    // the token taken; "" when a live holder has the row
	found bool      // the session is stored
	dead  inherited // the spend the row carried when taken over
	at    time.Time // the database's clock as the take's transaction began
	last  int       // the agent's latest step
}

// errTakeAlone answers the members of a group whose transaction a
// statement raised in, so rolled back whole: each takes its lock alone,
// as before, and meets its own error, if any, there.
var errTakeAlone = errors.New("a grouped step lock take was rolled back; take it alone")

// Bounds of a group of more than one take.
const (
	// stepTakeLimit: a group sends under no caller's context, and a take
	// answered after a lock's life may hold a row that ran out before the
	// heartbeat could renew it. Its members read it as an outage.
	stepTakeLimit = lockTTL
	// stepTakeWait is the longest a grouped statement waits for a row
	// another transaction holds (a session's row a delete holds, a lock
	// row a landing deletes): longer than a landing holds one, short
	// enough that one session's delete does not hold up the replica's
	// steps. A group that waits longer raises, and its members take their
	// locks alone, each waiting only for its own rows.
	stepTakeWait = 200 * time.Millisecond
	// stepTakesMax caps one transaction's takes: the rows of a group are
	// held until it commits.
	stepTakesMax = 256
)

// stepTakeWaitSet sets stepTakeWait for the group's transaction.
var stepTakeWaitSet = fmt.Sprintf(`SELECT set_config('lock_timeout', '%dms', true)`, stepTakeWait.Milliseconds())

// stepLockTakeBounded is stepLockTake that first sets stepTakeWait for
// its transaction, in the statement's first CTE (lockcfg), which the
// session's row is read with, so before the take waits for any row.
var stepLockTakeBounded = strings.Replace(stepLockTake,
	`SELECT set_config('synchronous_commit', 'off', true)`,
	fmt.Sprintf(`SELECT set_config('synchronous_commit', 'off', true), set_config('lock_timeout', '%dms', true)`, stepTakeWait.Milliseconds()), 1)

// stepNumbering reads an agent's latest step.
const stepNumbering = `SELECT coalesce(max(step), 0) FROM entries WHERE tenant = $1 AND session_id = $2 AND agent_id = $3`

// takeSteps is stepTakes' write. A group of one is sent under its
// caller's context, the take alone it always was but for its row waits,
// bounded as a group's are (sendTakes). A larger group is sent
// in (tenant, session, agent) order, so two replicas' groups take their
// rows in one order and never deadlock, stepTakesMax to a transaction.
// A transaction a statement raised in (a PostgreSQL error that is not an
// outage) answers its members errTakeAlone; any other error (an outage,
// the time limit, an answer not read) may have come after the commit, so
// every member is given it, as its take alone would have been, and lets
// its token go (took).
func (db *DB) takeSteps(ts []*stepTake) []error {
	errs := make([]error, len(ts))
	if len(ts) == 1 {
		// Its row waits bounded too (stepTakeWait): the replica's next
		// takes wait for it, and a caller's context need not end. One
		// that waits longer takes its lock again alone, outside the
		// group (lockStep), waiting for its row as long as its context
		// lets it.
		errs[0] = alone(db.sendTakes(ts[0].ctx, ts, true))
		return errs
	}
	sorted := slices.Clone(ts)
	slices.SortStableFunc(sorted, func(a, b *stepTake) int {
		return cmp.Or(cmp.Compare(a.s.tenant, b.s.tenant), cmp.Compare(a.id, b.id), cmp.Compare(a.agent, b.agent))
	})
	return answerInChunks(ts, sorted, stepTakesMax, db.sendGroup)
}

// sendGroup sends a group of more than one take under the group's limits.
func (db *DB) sendGroup(ts []*stepTake) error {
	ctx, cancel := context.WithTimeout(db.ctx, stepTakeLimit)
	defer cancel()
	return db.sendTakes(ctx, ts, true)
}

// sendTakes takes the step locks of ts in one round trip, one implicit
// transaction, and reads each its answers: every take, then every
// numbering, then every claim. Each numbering is a statement after its
// take, so its snapshot holds the entry of the previous holder, committed
// before that holder let the lock go (the taking statement's snapshot may
// predate it), and a numbering that fails takes the lock back with it.
// Each take turns synchronous_commit off for the transaction (lockTaking);
// a claim that writes turns it back on (durableWith), so the claims come
// last and a transaction with one commits durably, one without does not
// wait for the flush. A take refused (a live holder, no session) is no
// error: its row says so, and its claim, fenced by the take's own token,
// writes nothing. A group's takes (grouped, even a group of one: the
// replica's next takes wait for it) wait for a row no longer than
// stepTakeWait: a group of more than one sets it in a statement of its
// own first, a group of one in its take's own statement
// (stepLockTakeBounded), which keeps a lone take's three statements. A
// take alone, outside the group, waits as it always did.
func (db *DB) sendTakes(ctx context.Context, ts []*stepTake, grouped bool) error {
	b := &pgx.Batch{}
	setFirst := grouped && len(ts) > 1
	if setFirst {
		b.Queue(stepTakeWaitSet)
	}
	take := stepLockTake
	if grouped && len(ts) == 1 {
		take = stepLockTakeBounded
	}
	queueTakesBy(b, ts, db.lockTakeover(), take)
	br := db.pool.SendBatch(ctx, b)
	var err error
	if setFirst {
		_, err = br.Exec()
	}
	if err == nil {
		err = readTakes(br, ts)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// queueTakes queues the statements of ts's takes (sendTakes); takeover is
// DB.lockTakeover's.
func queueTakes(b *pgx.Batch, ts []*stepTake, takeover *time.Time) {
	queueTakesBy(b, ts, takeover, stepLockTake)
}

// queueTakesBy is queueTakes with take, stepLockTake or
// stepLockTakeBounded, as the takes' statement.
func queueTakesBy(b *pgx.Batch, ts []*stepTake, takeover *time.Time, take string) {
	for _, t := range ts {
		b.Queue(take, t.s.tenant, t.id, "step:"+t.agent, t.token, lockTTL.Milliseconds(), takeover)
	}
	for _, t := range ts {
		b.Queue(stepNumbering, t.s.tenant, t.id, t.agent)
	}
	for _, t := range ts {
		t.fold.queue(b, t.s.tenant, t.id, t.agent, "step:"+t.agent, t.token)
	}
}

// readTakes reads the answers of queueTakes' statements into ts.
func readTakes(br pgx.BatchResults, ts []*stepTake) error {
	for _, t := range ts {
		if err := br.QueryRow().Scan(&t.got, &t.found, &t.dead, &t.at); err != nil {
			return err
		}
	}
	for _, t := range ts {
		if err := br.QueryRow().Scan(&t.last); err != nil {
			return fmt.Errorf("numbering the step of agent %q in session %q: %w", t.agent, t.id, err)
		}
	}
	for _, t := range ts {
		if err := t.fold.read(br); err != nil {
			return err
		}
	}
	return nil
}
