package pgstore

import (
	"context"
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
