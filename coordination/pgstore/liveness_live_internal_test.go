package pgstore

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// dropListener ends the LISTEN connection that holds r's liveness lock, as
// a network blip, a proxy or pg_terminate_backend ends it.
func dropListener(t *testing.T, st *Store, r *replica) {
	t.Helper()
	hi, lo := int64(uint32(uint64(r.key)>>32)), int64(uint32(uint64(r.key)))
	var n int
	err := st.db.pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1 AND granted`, hi, lo).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("ending the LISTEN connection: %d ended, %v", n, err)
	}
}

// renewAndLook renews a's run lease every heartbeat (2 s), as its
// heartbeat does, while b looks for dead replicas and for runs to take up
// every 250 ms, as several replicas' looks do, for d: whether b took the
// run.
func renewAndLook(t *testing.T, a, b *Store, version int64, d time.Duration) bool {
	t.Helper()
	ctx := context.Background()
	lastBeat := time.Time{}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if time.Since(lastBeat) >= coordination.DefaultHeartbeat {
			if _, err := a.RenewRun(ctx, "s", version, coordination.DefaultLeaseTTL); err != nil {
				t.Logf("the live replica's heartbeat: %v", err)
				return true
			}
			lastBeat = time.Now()
		}
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), coordination.DefaultLeaseTTL); err == nil {
			t.Logf("b took the run %v after a's last renewal", time.Since(lastBeat))
			return true
		}
	}
	return false
}

// A replica whose steps hold every connection of its main pool still
// renews its leases (the heartbeat's pool, TestLeasesAreRenewedWhileEvery
// ConnectionIsBusy); if its LISTEN connection is lost then, listen cannot
// make it again until a step lets a connection go (db.pool.Acquire), and
// the liveness lock stays free while the process lives and renews. Its
// run must not be taken from it.
func TestALiveReplicaWhoseListenerWaitsForAConnectionIsNotReaped(t *testing.T) {
	p := withOtherProcess(t, "busy")
	ctx, a, b, owner, rep := context.Background(), p.a, p.b, p.owner, p.rep
	l, err := a.AcquireRun(ctx, "s", owner, coordination.DefaultLeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	holdEveryConnection(t, a) // every step writing at once
	dropListener(t, b, rep)
	if renewAndLook(t, a, b, l.Version, 6*time.Second) {
		t.Fatal("another replica took the run of a live replica renewing its lease every heartbeat")
	}
}

// A replica whose liveness lock waits behind a reaper's look past the
// role's lock_timeout (55P03, a *pgconn.PgError) goes on listening without
// the lock while its row stays registered: it must not then be reaped.
func TestAReplicaWhoseLivenessLockTimedOutIsNotReaped(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	rep, owner := deadReplica("strict")
	logs := &coordtest.SyncBuffer{}
	adb, err := Open(ctx, dsn+"&lock_timeout=200ms", Options{replica: rep, Logger: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer adb.Close()
	a := forTenant(t, adb)
	b := replicaOn(t, dsn, Options{})
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.AcquireRun(ctx, "s", owner, coordination.DefaultLeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	// A reaper's look holding the key (pg_try_advisory_xact_lock) as the
	// listener comes back; here a connection of the test's for a moment.
	x, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close(ctx)
	dropListener(t, b, rep)
	for got := false; !got; {
		if err := x.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, rep.key).Scan(&got); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // listen comes back within 500 ms and waits for the lock
	if strings.Contains(logs.String(), "other replicas will see this one dead") {
		t.Log("the listener gave up on its liveness lock and listens without it")
	}
	if _, err := x.Exec(ctx, `SELECT pg_advisory_unlock($1)`, rep.key); err != nil {
		t.Fatal(err)
	}
	if renewAndLook(t, a, b, l.Version, 6*time.Second) {
		t.Fatal("another replica took the run of a live replica, listening and renewing, whose liveness lock had timed out once")
	}
}

// A command that opens the store for a moment (Options.Existing: status,
// cancel, approve) is no replica: it leaves no row for the replicas to
// reap, and no warning that a replica's process is gone.
func TestACommandsBriefOpenLeavesNoReplicaToReap(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	logs := &coordtest.SyncBuffer{}
	b := replicaOn(t, dsn, Options{Logger: zerolog.New(logs)})
	rep, _ := deadReplica("cli")
	cli, err := Open(ctx, dsn, Options{Existing: true, replica: rep})
	if err != nil {
		t.Fatal(err)
	}
	cli.Close()
	if n := registered(t, b, rep.key); n != 0 {
		t.Errorf("a command's open left %d rows in replicas", n)
	}
	for range 3 {
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(reapAfter + 100*time.Millisecond)
	}
	if strings.Contains(logs.String(), "its process gone") {
		t.Error("a command that opened the store for a moment was reaped with a warning that a replica's process is gone")
	}
}

// One look for dead replicas with a registered one to reap, among many
// leases: how long massgen_reap takes (leases has no index on host, pid,
// proc_start). MASSGEN_REAP_LEASES rows; off unless set.
func TestReapOnManyLeases(t *testing.T) {
	n := os.Getenv("MASSGEN_REAP_LEASES")
	if n == "" {
		t.Skip("MASSGEN_REAP_LEASES unset")
	}
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	b := replicaOn(t, dsn, Options{})
	rep, _ := deadReplica("gone")
	fill, err := pgx.Connect(ctx, dsn) // not b's pool: a statement answered late marks an outage there
	if err != nil {
		t.Fatal(err)
	}
	defer fill.Close(ctx)
	for _, q := range []string{
		`INSERT INTO sessions (tenant, id, created_at, setup, log_seq) SELECT 'default', 's' || g, now(), '{}', 1 FROM generate_series(1, ($1::int) / 4) g`,
		`INSERT INTO leases (tenant, session_id, agent_id, owner_id, host, pid, proc_start, version, claimed_at, renewed_at, expires_at, released)
			SELECT 'default', 's' || g, a, 'o', 'host' || (g % 50), 1000 + g % 7, 5, 1, now(), now(), now(), true
			FROM generate_series(1, ($1::int) / 4) g, unnest(array['', 'a', 'b', 'c']) a`,
	} {
		if _, err := fill.Exec(ctx, q, n); err != nil {
			t.Fatal(q, err)
		}
	}
	if _, err := fill.Exec(ctx, `ANALYZE sessions; ANALYZE leases`); err != nil {
		t.Fatal(err)
	}
	holdAs(t, b, dsn, rep).letGo()
	if _, err := b.db.pool.Exec(ctx, `UPDATE replicas SET seen_gone_at = now() - interval '1 minute', beat_at = now() - interval '1 minute' WHERE lock_key = $1`, rep.key); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		start := time.Now()
		err := b.db.reapOnce(ctx)
		t.Logf("a look with a replica to reap among %s leases: %v (%v)", n, time.Since(start), err)
		if errors.Is(err, context.DeadlineExceeded) || err != nil {
			continue
		}
		break
	}
	if k := registered(t, b, rep.key); k != 0 {
		t.Errorf("the dead replica is still registered after three looks")
	}
}

// A reap expires a live holder's lock rows (both its signs failed, or a
// bug); another replica takes one, steps and lets it go, deleting its
// row. The former holder's heartbeat must not then put the row back, as
// it does a row a database crash lost (renew): it would hold the lock
// again, unknown to the one that had it in between.
func TestALockTakenAndLetGoAfterAReapIsNotPutBackByItsFormerHolder(t *testing.T) {
	p := withOtherProcess(t, "reaped")
	ctx, a, b, rep, adb := context.Background(), p.a, p.b, p.rep, p.a.db
	held, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	putBack := func(when string) {
		t.Helper()
		took, err := b.LockStep(ctx, "s", "agent_a")
		if err != nil {
			t.Fatal(err)
		}
		took.Release()
		time.Sleep(lockBeat + 500*time.Millisecond) // a's heartbeat
		var n int
		if err := b.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE name = 'step:agent_a' AND left(token, length($1) + 1) = $1 || '.' AND expires_at > now()`, rep.tag).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: the reaped holder's heartbeat put back the step lock another replica had taken and let go since", when)
		}
	}
	// massgen_reap's own writes: the lock rows expired, the registration gone
	reap := func() {
		t.Helper()
		if _, err := b.db.pool.Exec(ctx, `UPDATE locks k SET expires_at = now()
			WHERE left(k.token, length($1) + 1) = $1 || '.' AND k.expires_at > now()`, rep.tag); err != nil {
			t.Fatal(err)
		}
		if _, err := b.db.pool.Exec(ctx, `DELETE FROM replicas WHERE lock_key = $1`, rep.key); err != nil {
			t.Fatal(err)
		}
	}
	reap()
	putBack("reaped, not registered again")
	// Registered again (its LISTEN connection made again), then its older
	// lock reaped and taken: still not put back.
	held2, err := a.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	defer held2.Release()
	time.Sleep(10 * time.Millisecond)
	c, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := adb.holdLiveness(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.pool.Exec(ctx, `UPDATE replicas SET started_at = now() + interval '2 seconds' WHERE lock_key = $1`, rep.key); err != nil {
		t.Fatal(err) // registered well after the lock was taken, past the clock allowance
	}
	if _, err := b.db.pool.Exec(ctx, `UPDATE locks k SET expires_at = now() WHERE name = 'step:agent_b'`); err != nil {
		t.Fatal(err)
	}
	took, err := b.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	took.Release()
	time.Sleep(lockBeat + 500*time.Millisecond)
	var n int
	if err := b.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE name = 'step:agent_b' AND expires_at > now()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("registered again: the heartbeat put back a lock taken before the registration, which another replica had taken and let go since")
	}
}

// A replica whose steps hold every connection of its main pool beats on:
// its beat is what keeps it from being reaped when its LISTEN connection
// waits for one of those connections (TestALiveReplicaWhoseListenerWaits
// ForAConnectionIsNotReaped). The look that follows each beat must not
// hold the next beat up while it waits for a connection of the main pool.
func TestABusyReplicaBeatsWhileItsLookWaitsForAConnection(t *testing.T) {
	p := withOtherProcess(t, "busybeat")
	ctx, a, b, rep := context.Background(), p.a, p.b, p.rep
	holdEveryConnection(t, a) // every step writing at once
	time.Sleep(3 * reapEvery) // a's looks: each waits for a connection
	var age time.Duration
	if err := b.db.pool.QueryRow(ctx, `SELECT extract(epoch FROM now() - beat_at) * interval '1 second' FROM replicas WHERE lock_key = $1`, rep.key).Scan(&age); err != nil {
		t.Fatal(err)
	}
	if age > reapSilent {
		t.Errorf("the busy replica last beat %v ago (a reap takes one silent for %v)", age, reapSilent)
	}
	dropListener(t, b, rep)
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if registered(t, b, rep.key) == 0 {
		t.Error("a live replica whose steps hold every connection, its LISTEN connection lost, was reaped: its beats stopped behind its look")
	}
}

// reapAs writes what massgen_reap writes for rep: its lock rows expired,
// its registration gone.
func reapAs(t *testing.T, st *Store, rep *replica) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.db.pool.Exec(ctx, `UPDATE locks k SET expires_at = now()
		WHERE left(k.token, length($1) + 1) = $1 || '.' AND k.expires_at > now()`, rep.tag); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.pool.Exec(ctx, `DELETE FROM replicas WHERE lock_key = $1`, rep.key); err != nil {
		t.Fatal(err)
	}
}

// registerAgain makes db's registration again, as its LISTEN connection
// made again does after a reap.
func registerAgain(t *testing.T, db *DB, dsn string) {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	if err := db.holdLiveness(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// stepLockPutBack tells whether rep holds agent's step lock row, live.
func stepLockPutBack(t *testing.T, st *Store, rep *replica, agent string) bool {
	t.Helper()
	var n int
	if err := st.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM locks WHERE name = $2 AND left(token, length($1) + 1) = $1 || '.' AND expires_at > now()`,
		rep.tag, "step:"+agent).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n != 0
}

// A lock taken a moment before a reap whose holder registers again at
// once (its LISTEN connection made again as soon as the reaper's look
// commits) was reaped all the same: a row another replica then takes and
// lets go is not the former holder's to put back, however close its take
// was to the registration standing now.
func TestALockTakenJustBeforeAReapIsNotPutBackAfterTheRegistrationIsMadeAgain(t *testing.T) {
	p := withOtherProcess(t, "justbefore")
	ctx, a, b, rep := context.Background(), p.a, p.b, p.rep
	held, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	reapAs(t, b, rep)
	registerAgain(t, a.db, p.dsn)
	took, err := b.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	took.Release()
	time.Sleep(lockBeat + 500*time.Millisecond) // a's heartbeat
	if stepLockPutBack(t, b, rep, "agent_a") {
		t.Error("the heartbeat put back a lock reaped, taken by another replica and let go: its take was within the clock allowance of the registration made again after the reap")
	}
}

// A token the heartbeat forgot (its row reaped, taken by another replica)
// stays forgotten when its holder's landing fails: the landing puts the
// lock back among the held ones only if it was there, as it was taken.
func TestAFailedLandingDoesNotHandAForgottenLockBackToTheHeartbeat(t *testing.T) {
	p := withOtherProcess(t, "landing")
	ctx, a, b, rep := context.Background(), p.a, p.b, p.rep
	held, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	time.Sleep(coordination.MaxClockSkew + 200*time.Millisecond) // taken well before the reap
	reapAs(t, b, rep)
	registerAgain(t, a.db, p.dsn)
	took, err := b.LockStep(ctx, "s", "agent_a")
	// a's heartbeat renews its rows by token, expired or not: one that beat
	// between the reap and b's take kept the row a's (a lives), which is
	// not what this test is about; the reap is made again until b's take
	// comes first.
	for try := 0; errors.Is(err, coordination.ErrAgentBusy) && try < 5; try++ {
		reapAs(t, b, rep)
		registerAgain(t, a.db, p.dsn)
		took, err = b.LockStep(ctx, "s", "agent_a")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.(coordination.ReleasingStepLock).AppendAndRelease(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "late", Label: "agent_a.1"}); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("the reaped holder's landing under another's lock: %v, want ErrLeaseLost", err)
	}
	took.Release()
	time.Sleep(lockBeat + 500*time.Millisecond) // a's heartbeat
	if stepLockPutBack(t, b, rep, "agent_a") {
		t.Error("after its landing failed, the reaped holder's heartbeat put back the lock another replica had taken and let go")
	}
}
