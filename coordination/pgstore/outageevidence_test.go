package pgstore

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A replica opened after the database restarted did not see the outage
// (its LISTEN connection was never cut), yet a run lease that ran out while
// the database was down is a live holder's as likely as a dead one's: the
// replica reads it held, and claims nothing, until a TTL after the
// database started. Before, it read the run interrupted at once, and under
// --resume-interrupted took it over from its holder as soon as it started.
func TestAReplicaStartedAfterADatabaseRestartLeavesTheRunsItsOutageStoppedToTheirHolders(t *testing.T) {
	pg := pgtest.StartPrivate(t)
	a := replicaOn(t, pg.DSN, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	// Long enough for b to open within the excuse under a loaded CI
	// machine's two cores: it lasts a TTL (and the clock allowance) from
	// b's Open.
	const ttl = 3 * time.Second
	if _, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("a"), ttl); err != nil {
		t.Fatal(err)
	}
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl + 200*time.Millisecond) // the lease runs out while the database is down
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	b := replicaOn(t, pg.DSN, Options{})
	l, err := b.ReadRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); !l.Held(now) || l.Abandoned(now) {
		t.Errorf("a replica started right after the restart reads the lease that ran out in it as a dead run's: %+v", l)
	}
	if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), ttl); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("a claim right after the restart = %v, want ErrSessionRunning (the holder may renew)", err)
	}
	// A TTL (and the clock allowance) after b first heard the database, a
	// holder that did not renew is dead.
	_, back := b.db.outage.span()
	time.Sleep(time.Until(back.Add(ttl + coordination.MaxClockSkew + 100*time.Millisecond)))
	if l, err := b.ReadRun(ctx, "s"); err != nil || !l.Abandoned(time.Now()) {
		t.Errorf("a TTL after the restart the unrenewed lease reads %+v (%v), want abandoned", l, err)
	}
	if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), ttl); err != nil {
		t.Errorf("claiming a dead run's lease a TTL after the restart: %v", err)
	}
}

// A database cut off for less than silentFor fails no statement: each is
// answered once it is back, late. A statement answered late marks an
// outage from when it was sent, so a run lease that ran out while it
// waited reads held, and is not claimed, until the database has answered
// for a TTL. (The wait here is the database's own, pg_sleep: the replica
// cannot tell one from the other.)
func TestALeaseThatRanOutWhileAStatementWaitedIsLeftToItsHolder(t *testing.T) {
	dsn := pgtest.Schema(t)
	const late = 1500 * time.Millisecond
	a, b := replicaOn(t, dsn, Options{}), replicaOn(t, dsn, Options{lateAnswer: late})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	if _, err := a.AcquireRun(ctx, "s", coordination.ThisProcess("a"), ttl); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if _, err := b.db.pool.Exec(ctx, `SELECT pg_sleep(2)`); err != nil { // the lease runs out meanwhile
		t.Fatal(err)
	}
	lost, back := b.db.outage.span()
	if from := sent.Add(-silentFor); lost.Before(from) || lost.After(from.Add(late/2)) || back.Before(sent.Add(late)) {
		t.Fatalf("a statement answered late marked the outage %v to %v, want from %v (when it was sent, less silentFor) to after %v", lost, back, from, sent.Add(late))
	}
	if l, err := b.ReadRun(ctx, "s"); err != nil || !l.Held(time.Now()) {
		t.Errorf("right after a late answer the lease that ran out while it waited reads %+v (%v), want held", l, err)
	}
	if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), ttl); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("a claim right after a late answer = %v, want ErrSessionRunning", err)
	}
	time.Sleep(time.Until(back.Add(ttl + coordination.MaxClockSkew + 100*time.Millisecond)))
	if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), ttl); err != nil {
		t.Errorf("claiming the lease a TTL after the late answer: %v", err)
	}
}

// A statement that failed as unreachable after waiting marks an outage
// going on from when it was sent (the caller's Unavailable, next, would
// mark it only from then), and the next statement answered in time ends
// it.
func TestALateFailureMarksTheOutageFromWhenItsStatementWasSent(t *testing.T) {
	seen := &outageSeen{}
	tr := &answerWatch{seen: seen, after: time.Second}
	sent := time.Now().Add(-3 * time.Second)
	tr.answered(context.WithValue(context.Background(), sentAt{}, sent), io.ErrUnexpectedEOF)
	seen.lostAt(time.Now()) // Unavailable, told of the same failure
	if seen.lost != sent || !seen.going {
		t.Fatalf("after a late failure the outage is %v to %v, want going on since %v", seen.lost, seen.back, sent)
	}
	// A failure in time, or a late one of the database's own, tells nothing.
	tr.answered(context.WithValue(context.Background(), sentAt{}, time.Now()), io.ErrUnexpectedEOF)
	if seen.lost != sent {
		t.Errorf("a failure in time moved the outage's start to %v", seen.lost)
	}
	answered := time.Now()
	tr.answered(context.WithValue(context.Background(), sentAt{}, answered), nil)
	if seen.going || seen.back.Before(answered) {
		t.Errorf("an answer in time did not end the outage (back %v)", seen.back)
	}
	// An answer in time marks none.
	tr.answered(context.WithValue(context.Background(), sentAt{}, time.Now()), nil)
	if seen.going || seen.lost != sent {
		t.Errorf("an answer in time marked an outage: %v to %v, going %v", seen.lost, seen.back, seen.going)
	}
	// One seen again while the last one's excuse runs (a read-only
	// database refusing writes between reads answered) is the same one;
	// one seen later is another.
	seen.lostAt(seen.back.Add(joinWithin / 2))
	if seen.lost != sent {
		t.Errorf("an outage seen within %v of the last one's end began another, at %v", joinWithin, seen.lost)
	}
	seen.heard(time.Now())
	later := seen.back.Add(joinWithin + time.Second)
	seen.lostAt(later)
	if seen.lost != later {
		t.Errorf("an outage seen %v after the last one's end was joined to it (lost %v)", joinWithin+time.Second, seen.lost)
	}
	seen.heard(later.Add(time.Second))
	// An earlier outage learnt of later changes nothing.
	lost, back := seen.lost, seen.back
	seen.spanned(lost.Add(-time.Hour), lost.Add(-time.Hour+time.Second))
	if seen.lost != lost || seen.back != back {
		t.Errorf("an earlier outage moved the last one to %v to %v", seen.lost, seen.back)
	}
}

// A lock row that ran out in an outage this replica saw is left to its
// holder as a lease is (DB.lockTakeover): a session lock or a step lock
// taken from a holder cut off as this replica was would run its work
// twice. A row that ran out well before the outage, or once the database
// has answered for a lock's TTL, is taken over.
func TestALockThatRanOutInAnOutageIsLeftToItsHolder(t *testing.T) {
	a, b := replicasSharing(t, "s")
	ctx := context.Background()
	ran := func(name string, ago time.Duration) {
		t.Helper()
		tok, err := a.tryLock(ctx, "s", name)
		if err != nil || tok == "" {
			t.Fatalf("a takes %s: %q, %v", name, tok, err)
		}
		a.db.held.remove(a.tenant, tok) // a's heartbeat renews it no more
		if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET expires_at = now() - $2 * interval '1 millisecond' WHERE token = $1`, tok, ago.Milliseconds()); err != nil {
			t.Fatal(err)
		}
	}
	outage := func(lost, back time.Time) {
		b.db.outage.mu.Lock()
		b.db.outage.lost, b.db.outage.back, b.db.outage.going = lost, back, false
		b.db.outage.mu.Unlock()
	}
	ran("session", 100*time.Millisecond)
	ran("step:x", 100*time.Millisecond)
	outage(time.Now().Add(-200*time.Millisecond), time.Now())
	if tok, err := b.tryLock(ctx, "s", "session"); err != nil || tok != "" {
		t.Errorf("right after an outage b took the session lock that ran out in it: %q, %v", tok, err)
	}
	if _, err := b.LockStep(ctx, "s", "x"); !errors.As(err, new(*coordination.BusyError)) {
		t.Errorf("right after an outage b's step lock = %v, want the agent busy", err)
	}
	// The database has answered for a lock's TTL: the holders are dead.
	outage(time.Now().Add(-lockTTL-coordination.MaxClockSkew-time.Second), time.Now().Add(-lockTTL-coordination.MaxClockSkew-100*time.Millisecond))
	if tok, err := b.tryLock(ctx, "s", "session"); err != nil || tok == "" {
		t.Errorf("a TTL after the outage b could not take the dead holder's session lock: %q, %v", tok, err)
	}
	if l, err := b.LockStep(ctx, "s", "x"); err != nil {
		t.Errorf("a TTL after the outage b could not take the dead holder's step lock: %v", err)
	} else {
		l.Release()
	}
	// A row late well before the outage began is a dead holder's at once.
	ran("step:y", silentFor+lockTTL+coordination.MaxClockSkew+5*time.Second)
	outage(time.Now().Add(-200*time.Millisecond), time.Now())
	if l, err := b.LockStep(ctx, "s", "y"); err != nil {
		t.Errorf("b could not take a step lock that ran out long before the outage: %v", err)
	} else {
		l.Release()
	}
}
