package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A session lock passed on within passFor of its take was taken to be
// safe because its row's expiry could not have come. A reap comes
// sooner: it expires the rows of a replica whose beats went silent for
// reapSilent, whatever their expiry, and another replica takes them at
// once; a database crash or failover empties the unlogged locks table,
// and another replica inserts the row as the database answers again. The
// heartbeat learns of either a beat later, or, while it cannot reach the
// database, not at all: a pass meanwhile hands a second writer the lock
// that another replica holds.

// passedWhileHeldElsewhere lets a's holder go, its waiter queued (got,
// release: lockedWithWaiter's), while b holds the lock by bu, and tells
// whether the waiter got it before b let it go.
func passedWhileHeldElsewhere(t *testing.T, unlock func(), got <-chan error, release chan<- struct{}, bu func()) bool {
	t.Helper()
	unlock()
	passed := false
	select {
	case err := <-got:
		passed = true
		if err != nil {
			t.Fatalf("the waiter got %v, want to wait for the other replica's let-go", err)
		}
	case <-time.After(300 * time.Millisecond):
	}
	bu()
	if !passed {
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("the waiter got %v once the other replica let the lock go, want it", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter did not get the lock in 10 s once the other replica let it go")
		}
	}
	close(release)
	return passed
}

// TestASessionLockIsNotPassedOnOnceItsReplicaMayHaveBeenReaped: a's beats
// and renewals cannot reach the database (its heartbeat's pool), for
// longer than a reap waits for beats (reapSilent) yet less than passFor
// after the take; b reaps it (massgen_reap's writes) and takes the
// session lock. a's holder lets go: its waiter must wait for b, not be
// handed the lock b holds.
func TestASessionLockIsNotPassedOnOnceItsReplicaMayHaveBeenReaped(t *testing.T) {
	p := withOtherProcess(t, "passreaped")
	ctx, a, b, rep := context.Background(), p.a, p.b, p.rep
	unlock, got, release := lockedWithWaiter(t, a)
	a.db.beats.Close() // a's beats and renewals fail from here on
	time.Sleep(reapSilent + 100*time.Millisecond)
	if passFor <= reapSilent+time.Second {
		t.Fatalf("passFor %v leaves no time to test a pass after a reap (reapSilent %v)", passFor, reapSilent)
	}
	if _, err := b.db.pool.Exec(ctx, `UPDATE locks k SET expires_at = now()
		WHERE left(k.token, length($1) + 1) = $1 || '.' AND k.expires_at > now()`, rep.tag); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.pool.Exec(ctx, `DELETE FROM replicas WHERE lock_key = $1`, rep.key); err != nil {
		t.Fatal(err)
	}
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	bu, err := b.LockSession(bctx, "s")
	if err != nil {
		t.Fatalf("the other replica's take of a reaped replica's session lock got %v, want the lock", err)
	}
	if passedWhileHeldElsewhere(t, unlock, got, release, bu) {
		t.Error("a reaped replica passed its session lock on while another replica held it: two writers")
	}
}

// TestASessionLockIsNotPassedOnAfterAnOutage: the database crashes (its
// unlogged locks table emptied) and comes back; a saw the outage (its
// connections ended) and b takes the session lock whose row went. a's
// holder lets go: its waiter must wait for b. a's heartbeat cannot put the
// row back (b has it) and keeps the token, as it does for any row another
// replica holds, so the token alone does not tell.
func TestASessionLockIsNotPassedOnAfterAnOutage(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := replicaOn(t, dsn, Options{}), replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, got, release := lockedWithWaiter(t, a)
	if _, err := b.db.pool.Exec(ctx, `DELETE FROM locks`); err != nil { // the crash's
		t.Fatal(err)
	}
	a.db.outage.lostAt(time.Now())
	a.db.outage.heard(time.Now().Add(100 * time.Millisecond))
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	bu, err := b.LockSession(bctx, "s")
	if err != nil {
		t.Fatalf("the other replica's take of a session lock whose row a crash lost got %v, want the lock", err)
	}
	if passedWhileHeldElsewhere(t, unlock, got, release, bu) {
		t.Error("a replica that saw the database crash passed its session lock on while another replica held it: two writers")
	}
}
