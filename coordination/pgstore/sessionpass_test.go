package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A round's landings queue on the session lock in one replica: a holder
// that lets it go while another caller here waits passes it on, its row
// kept, where the let-go and the waiter's take were a round trip each.

// lockedWithWaiter is the session lock of s held on a, and a second
// caller on a queued for it: its unlock and error come on the channels
// once it has the lock (or failed), and it holds it until release closes.
func lockedWithWaiter(t *testing.T, a *Store) (unlock func(), got <-chan error, release chan<- struct{}) {
	t.Helper()
	ctx := context.Background()
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	errs, rel := make(chan error, 1), make(chan struct{})
	go func() {
		u, err := a.LockSession(ctx, "s")
		errs <- err
		if err == nil {
			<-rel
			u()
		}
	}()
	waitForWaiters(t, a, "s", 2)
	return unlock, errs, rel
}

// waitForWaiters waits until exactly n callers on a are taking or holding the
// session lock of id.
func waitForWaiters(t *testing.T, a *Store, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.db.gates.mu.Lock()
		gt := a.db.gates.gates[a.tenant+"/"+id]
		refs := 0
		if gt != nil {
			refs = gt.refs
		}
		a.db.gates.mu.Unlock()
		if refs == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait for the session lock of %q after 10 s, want %d", refs, id, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestASessionLockPassesToTheNextCallerHereWithoutARoundTrip: the holder's
// let-go and the waiter's take cost nothing; only the last holder's let-go
// is sent. Another replica cannot take the lock while it passes, and can
// once it is let go.
func TestASessionLockPassesToTheNextCallerHereWithoutARoundTrip(t *testing.T) {
	c := &RoundTrips{}
	dsn := pgtest.Schema(t)
	a, b := countedReplica(t, dsn, c), replicaOn(t, dsn, Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, got, release := lockedWithWaiter(t, a)
	before := c.Count()
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("the waiting caller got %v, want the lock", err)
	}
	if n := c.Count() - before; n != 0 {
		t.Errorf("the session lock went from one caller to the next in one replica in %d round trips, want 0", n)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.LockSession(short, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another replica's take of the session lock passed on got %v, want to wait for it", err)
	}
	before = c.Count()
	close(release)
	waitForWaiters(t, a, "s", 0)
	if n := c.Count() - before; n != 1 {
		t.Errorf("the last holder let the session lock go in %d round trips, want 1", n)
	}
	bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
	defer bcancel()
	u, err := b.LockSession(bctx, "s")
	if err != nil {
		t.Fatalf("another replica's take of the session lock let go got %v, want the lock", err)
	}
	u()
}

// TestASessionLockDeletedWithItsSessionIsNotPassedOn: the waiter of a
// session deleted under the lock is told the session is gone, as by a take
// of its own, rather than handed a lock whose row went with it (a session
// made again under the id could be locked by another replica meanwhile).
func TestASessionLockDeletedWithItsSessionIsNotPassedOn(t *testing.T) {
	a := countedReplica(t, pgtest.Schema(t), &RoundTrips{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, got, release := lockedWithWaiter(t, a)
	defer close(release)
	if err := a.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := <-got; !errors.Is(err, coordination.ErrSessionNotFound) {
		t.Errorf("the waiter for the lock of a session deleted under it got %v, want ErrSessionNotFound", err)
	}
}

// TestASessionLockPassesAtMostPassMaxTimesInARow: a busy replica lets the
// lock go after passMax holders, for another replica's take, and the next
// caller here takes it afresh.
func TestASessionLockPassesAtMostPassMaxTimesInARow(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, passMax+1)
	for range passMax + 1 {
		go func() {
			u, err := a.LockSession(ctx, "s")
			if err == nil {
				u()
			}
			errs <- err
		}()
	}
	waitForWaiters(t, a, "s", passMax+2)
	before := c.Count()
	unlock()
	for range passMax + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	waitForWaiters(t, a, "s", 0)
	// The passMax-th holder's let-go, the last caller's take and its let-go.
	if n := c.Count() - before; n != 3 {
		t.Errorf("%d callers after the holder took and let the session lock go in %d round trips, want 3", passMax+1, n)
	}
}

// TestASessionLockTheHeartbeatForgotIsTakenAfresh: a token the heartbeat
// forgot (a reap expired its row, which another replica may have taken) is
// not passed on: the holder lets it go and the waiter takes the lock.
func TestASessionLockTheHeartbeatForgotIsTakenAfresh(t *testing.T) {
	c := &RoundTrips{}
	a := countedReplica(t, pgtest.Schema(t), c)
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, got, release := lockedWithWaiter(t, a)
	var token string
	if err := a.db.pool.QueryRow(ctx, `SELECT token FROM locks WHERE tenant = $1 AND session_id = 's' AND name = 'session'`, a.tenant).Scan(&token); err != nil {
		t.Fatal(err)
	}
	a.db.held.remove(a.tenant, token)
	before := c.Count()
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("the waiter got %v, want the lock", err)
	}
	if n := c.Count() - before; n != 2 {
		t.Errorf("a forgotten session lock went to the next caller in %d round trips, want 2 (its let-go and a take)", n)
	}
	var now string
	if err := a.db.pool.QueryRow(ctx, `SELECT token FROM locks WHERE tenant = $1 AND session_id = 's' AND name = 'session'`, a.tenant).Scan(&now); err != nil {
		t.Fatal(err)
	}
	if now == token || !a.db.held.holds(a.tenant, now) {
		t.Errorf("the waiter holds token %q (the forgotten one %q), held %v; want a token of its own take, held", now, token, a.db.held.holds(a.tenant, now))
	}
	close(release)
}

// TestASessionLockPassesOnlyWhileItsTakeIsFresh: passFor after its take a
// lock passes no more, however the renewals went.
func TestASessionLockPassesOnlyWhileItsTakeIsFresh(t *testing.T) {
	s := &Store{db: &DB{outage: &outageSeen{}}, tenant: "t"}
	s.db.held.init()
	s.db.held.add("t", "tok", heldRow{session: "s", name: "session"})
	if !s.passable(&passing{token: "tok", sent: time.Now()}) {
		t.Error("a lock taken just now does not pass on; want it to")
	}
	if s.passable(&passing{token: "tok", sent: time.Now().Add(-passFor)}) {
		t.Error("a lock taken passFor ago passes on; want it let go")
	}
	if s.passable(&passing{token: "tok", sent: time.Now(), n: passMax}) {
		t.Error("a lock passed passMax times passes on; want it let go")
	}
}

// TestALockPassedToCallersThatAllGaveUpComesBack: the last of a gate's
// callers to leave gets the lock passed there, to let it go.
func TestALockPassedToCallersThatAllGaveUpComesBack(t *testing.T) {
	g := sessionGates{gates: map[string]*gate{}}
	holder, waiter := g.get("k"), g.get("k")
	p := &passing{token: "tok"}
	if !g.pass(holder, p) {
		t.Fatal("a lock with a caller queued was not passed")
	}
	if got := g.put("k", waiter); got != nil { // the waiter gave up
		t.Errorf("a caller leaving before the last got the passed lock %v", got)
	}
	if got := g.put("k", holder); got != p {
		t.Errorf("the last caller to leave got %v, want the passed lock", got)
	}
	if g.pass(g.get("k"), p) {
		t.Error("a lock with nobody queued was passed")
	}
}
