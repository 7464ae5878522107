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

// waitForWaiters waits until n callers on a are taking or holding the
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
		if refs >= n {
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
