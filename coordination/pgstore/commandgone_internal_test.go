package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A command's read (status, with no serving replica left to reap a dead
// one) reads a run whose holder shows both signs of death (its liveness
// lock free, its beats stopped for readGoneSilent) not held, and only
// then: a live replica that lost its LISTEN connection beats on, one whose
// beats are late holds its lock, one cut off for a moment beats again
// within readGoneSilent, and an outage's excuse keeps either alive. The read writes
// nothing: the lease row and the registration stay for a serving replica
// to reap. Before, the command read the run running for the lease's TTL.
func TestACommandReadsARunWhoseHolderShowsBothSignsOfDeathNotHeld(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	replicaOn(t, dsn, Options{}).db.Close()           // makes the schema; a replica closed reaps nobody
	cmd := replicaOn(t, dsn, Options{Existing: true}) // no replica: it reaps nobody either
	for deadline := time.Now().Add(30 * time.Second); cmd.db.lockTakeover() != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // a database started moments ago excuses every holder
	}
	rep, owner := deadReplica("alone")
	if err := cmd.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.AcquireRun(ctx, "s", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	signs := func(beatAgo time.Duration) {
		t.Helper()
		if _, err := cmd.db.pool.Exec(ctx, `UPDATE replicas SET beat_at = now() - $2 * interval '1 millisecond' WHERE lock_key = $1`, rep.key, beatAgo.Milliseconds()); err != nil {
			t.Fatal(err)
		}
	}
	lock := holdAs(t, cmd, dsn, rep)
	signs(time.Minute)
	if l := readRun(t, cmd); !l.Held(time.Now()) || l.Gone {
		t.Fatalf("a holder whose beats are late but whose lock is held: %+v, want held", l)
	}
	lock.letGo()
	signs(0)
	if l := readRun(t, cmd); !l.Held(time.Now()) || l.Gone {
		t.Fatalf("a holder whose lock is free but which beats: %+v, want held", l)
	}
	signs(reapSilent + 200*time.Millisecond) // a reap's silence, not a read's
	if l := readRun(t, cmd); !l.Held(time.Now()) || l.Gone {
		t.Fatalf("a holder whose lock is free and which has not beaten for a moment less than readGoneSilent: %+v, want held", l)
	}
	signs(readGoneSilent + time.Second)
	before := readRunRow(t, cmd)
	if l := readRun(t, cmd); l.Held(time.Now()) || !l.Gone || !l.Abandoned(time.Now()) {
		t.Fatalf("a holder whose lock is free and which beats no more: %+v, want gone, abandoned", l)
	}
	if after := readRunRow(t, cmd); after != before {
		t.Errorf("a command's read changed the lease row: %s, was %s", after, before)
	}
	if n := registered(t, cmd, rep.key); n != 1 {
		t.Errorf("a command's read left %d registrations of the dead replica, want 1 (a serving replica reaps it)", n)
	}
	cmd.db.outage.lostAt(time.Now())
	cmd.db.outage.heard(time.Now())
	if l := readRun(t, cmd); !l.Held(time.Now()) || l.Gone {
		t.Errorf("a holder gone in an outage's excuse: %+v, want held", l)
	}
}

// readRunRow is the run lease's row of session s as the database keeps it.
func readRunRow(t *testing.T, st *Store) string {
	t.Helper()
	var row string
	if err := st.db.pool.QueryRow(context.Background(), `SELECT l::text FROM leases l WHERE session_id = 's' AND agent_id = ''`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	return row
}
