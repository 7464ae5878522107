package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// A landing sent as a group's write waits for a row another transaction
// holds (a session's row a delete holds, a lock row held) no longer than
// landRowWait, then lands again outside the group (landgroup.go). The
// transactions holding rows here end once what must not wait for them
// has landed, or after 10 s: a landing held up until then says so rather
// than hanging the test.

// landedWhileHeld polls until every session of ids holds one entry, for
// 10 s at most, then ends tx; it tells whether they all
// landed before it ended.
func landedWhileHeld(t *testing.T, st *Store, tx pgx.Tx, ids ...string) bool {
	t.Helper()
	landed := false
	for deadline := time.Now().Add(10 * time.Second); !landed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		landed = true
		for _, id := range ids {
			landed = landed && rowsOf(t, st, "entries", id) == 1
		}
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	return landed
}

// TestARowWaitInALandingGroupHoldsUpNoOtherMember: a group one of whose
// landings waits for its session's row, which a delete's transaction
// holds (FOR UPDATE, as DeleteSession takes it first; the entry's
// foreign key waits for it), does not hold the group's other landings
// until the delete ends: they land meanwhile, each alone, and the waiting
// one lands once the delete is rolled back.
func TestARowWaitInALandingGroupHoldsUpNoOtherMember(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	later := landingsOf(t, a, "agent_a", ids("later", 6)...)
	del := holdSessionRow(t, dsn, a, "later2").tx
	heldDone, laterDone := landGrouped(t, a, later)
	heldDone()
	others := []string{"later0", "later1", "later3", "later4", "later5"}
	if !landedWhileHeld(t, a, del, others...) {
		t.Error("a group's landings waited for a delete's transaction holding the row of one of them")
	}
	out, errs := laterDone()
	for i, err := range errs {
		if err != nil || out[i].AnswerNum != 1 {
			t.Errorf("landing %d: %+v, %v; want answer 1", i, out[i], err)
		}
	}
}

// TestLandingsWaitingAloneForRowsHoldUpNoOtherLanding: landLeaders
// landings, each sent alone, that wait for their lock rows, which another
// transaction holds, leave the replica's leaders free after landRowWait:
// a landing of another session lands while they wait, where it waited
// for a leader until the rows were let go.
func TestLandingsWaitingAloneForRowsHoldUpNoOtherLanding(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	b := replicaOn(t, dsn, Options{})
	waiting := landingsOf(t, a, "agent_a", ids("waiting", landLeaders)...)
	free := landingsOf(t, a, "agent_a", "free")
	h := holdLockRows(t, b, ids("waiting", landLeaders)...)
	waitingDone := landAll(waiting)
	h.waitBlocked(t, b, landLeaders)
	freeDone := landAll(free)
	if !landedWhileHeld(t, a, h.tx, "free") {
		t.Error("a landing waited for a leader while every leader's landing waited for a row another transaction held")
	}
	for _, done := range []func() ([]coordination.Entry, []error){waitingDone, freeDone} {
		out, errs := done()
		for i, err := range errs {
			if err != nil || out[i].AnswerNum != 1 {
				t.Errorf("landing %d: %+v, %v; want answer 1", i, out[i], err)
			}
		}
	}
}

// TestRowWaitBoundsAreNotLeftOnThePoolsConnections: the row wait bounds
// a replica's grouped writes set (stepTakeWait, landRowWait) are their
// transactions' own: once a take group, a landing group that waited out,
// landings sent alone and one that waited out alone have gone, no
// connection of the pool waits for a row any less than it was set to.
func TestRowWaitBoundsAreNotLeftOnThePoolsConnections(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	b := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	sessionsOn(t, a, "t0", "t1")
	out, _ := takeTogether(t, a, c, []takeReq{{"t0", "agent_a"}, {"t1", "agent_a"}})
	for _, o := range out {
		if o.err != nil {
			t.Fatal(o.err)
		}
	}
	later := landingsOf(t, a, "agent_a", ids("later", 3)...)
	del := holdSessionRow(t, dsn, a, "later1").tx
	heldDone, laterDone := landGrouped(t, a, later)
	heldDone()
	landedWhileHeld(t, a, del, "later0", "later2")
	if _, errs := laterDone(); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	lone := landingsOf(t, a, "agent_a", "lone")
	h := holdLockRows(t, b, "lone")
	loneDone := landAll(lone)
	h.waitBlocked(t, b, 1)
	// Its group of one waited out (it held a leader until then): it waits
	// alone now.
	await(t, "the lone landing out of its group", func() bool { return a.db.landings.inFlight() == 0 })
	if err := h.tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, errs := loneDone(); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	var want string
	if err := b.db.pool.QueryRow(ctx, `SELECT reset_val FROM pg_settings WHERE name = 'lock_timeout'`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	p := a.db.pool
	for range p.Config().MaxConns {
		conn, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var got string
		if err := conn.QueryRow(ctx, `SELECT setting FROM pg_settings WHERE name = 'lock_timeout'`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("a pool connection (backend %d) has lock_timeout %s ms after the grouped writes, want %s", conn.Conn().PgConn().PID(), got, want)
		}
	}
}
