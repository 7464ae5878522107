package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// A step lock's take (lockStep) is one implicit transaction: the take, the
// step's numbering and, for a server step, its lease's claim. sendTakes
// sends the takes it is given in one; stepTakes will gather a replica's
// takes made at once into one.

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

// stepNumbering reads an agent's latest step.
const stepNumbering = `SELECT coalesce(max(step), 0) FROM entries WHERE tenant = $1 AND session_id = $2 AND agent_id = $3`

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
// writes nothing.
func (db *DB) sendTakes(ctx context.Context, ts []*stepTake) error {
	b := &pgx.Batch{}
	queueTakes(b, ts, db.lockTakeover())
	br := db.pool.SendBatch(ctx, b)
	err := readTakes(br, ts)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// queueTakes queues the statements of ts's takes (sendTakes); takeover is
// DB.lockTakeover's.
func queueTakes(b *pgx.Batch, ts []*stepTake, takeover *time.Time) {
	for _, t := range ts {
		b.Queue(stepLockTake, t.s.tenant, t.id, "step:"+t.agent, t.token, lockTTL.Milliseconds(), takeover)
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
