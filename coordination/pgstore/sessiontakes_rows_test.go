package pgstore

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// Grouped session lock takes and let-gos (sessiontakes.go) keep each
// member's row its own: by tenant as well as session, with the row waits'
// bound left in the group's transaction, and a member whose row is busy
// let go alone once it is free rather than left to expire.

// holdLockWrites keeps every insert into and delete from the locks table
// waiting (SHARE mode, on a connection of its own) while letting rows be
// locked FOR UPDATE, until release is called.
func holdLockWrites(t *testing.T, dsn string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE locks IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback(ctx)
			_ = conn.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// letGoTogether calls unlocks while the let-go of lead is in flight, held
// by hold, so they gather for the next group; it returns once all are let
// go, after calling meanwhile once they are gathered and hold released.
func letGoTogether(t *testing.T, a *Store, hold func() func(), lead func(), unlocks []func(), meanwhile func()) {
	t.Helper()
	release := hold()
	leadGone := make(chan struct{})
	go func() { lead(); close(leadGone) }()
	await(t, "the lead's let-go in flight", func() bool { return isLettingGo(a) })
	var wg sync.WaitGroup
	for _, u := range unlocks {
		wg.Go(u)
	}
	await(t, "every let-go waiting for the next group", func() bool { return a.db.sessionLetGos.waiting() >= len(unlocks) })
	release()
	<-leadGone
	meanwhile()
	wg.Wait()
}

// isLettingGo tells whether a's let-go group has a write in flight.
func isLettingGo(a *Store) bool {
	a.db.sessionLetGos.mu.Lock()
	defer a.db.sessionLetGos.mu.Unlock()
	return a.db.sessionLetGos.writing > 0
}

// TestASessionIDInTwoTenantsIsTwoLocksInOneGroup: the same session id of
// two tenants, taken in one group, is two locks, each held against
// another replica, and let go in one group, both rows gone.
func TestASessionIDInTwoTenantsIsTwoLocksInOneGroup(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	other, err := a.db.For("another-tenant")
	if err != nil {
		t.Fatal(err)
	}
	stores := []*Store{a, other.(*Store)}
	ctx := context.Background()
	for _, s := range stores {
		if err := s.Create(ctx, storetest.NewSession("x")); err != nil {
			t.Fatal(err)
		}
	}
	// Both take while the lead's take is held on the locks table.
	takes := make([]func() (func(), error), len(stores))
	for i, s := range stores {
		takes[i] = func() (func(), error) { return s.LockSession(ctx, "x") }
	}
	unlocks, errs, trips, lead := sessionTakesTogether(t, dsn, a, c, takes)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("tenant %s's take of session x: %v", stores[i].tenant, err)
		}
	}
	if trips != 1 {
		t.Errorf("two tenants' session x locks taken together took %d round trips, want 1", trips)
	}
	b := replicaOn(t, dsn, Options{})
	bOther, err := b.db.For("another-tenant")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{b, bOther.(*Store)} {
		if tok, err := s.tryLock(ctx, "x", "session"); err != nil || tok != "" {
			t.Errorf("another replica's take of tenant %s's session x lock, held: %q, %v; want refused", s.tenant, tok, err)
		}
	}
	letGoTogether(t, a, func() func() { return holdTable(t, dsn, "locks") }, lead, unlocks, func() {})
	var n int
	if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE session_id IN ('x', 'lead') AND name = 'session'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d session lock rows left after both tenants' let-gos, want 0", n)
	}
}

// TestSessionLockGroupsLeaveNoLockTimeoutOnThePoolsConnections: the
// groups' row wait bound is their transaction's own; a connection back in
// the pool waits for rows as long as a new one does.
func TestSessionLockGroupsLeaveNoLockTimeoutOnThePoolsConnections(t *testing.T) {
	dsn := pgtest.Schema(t)
	c := &QueryCounts{}
	a := countedReplica(t, dsn, c)
	ctx := context.Background()
	ids := []string{"s0", "s1", "s2"}
	for _, id := range ids {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
	}
	unlocks, errs, _, lead := lockSessionsTogether(t, dsn, a, c, ids, nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("session %s: %v", ids[i], err)
		}
	}
	letGoTogether(t, a, func() func() { return holdTable(t, dsn, "locks") }, lead, unlocks, func() {})
	// And a lone take and let-go, the lone statements.
	u, err := a.LockSession(ctx, "s0")
	if err != nil {
		t.Fatal(err)
	}
	u()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var fresh string
	if err := conn.QueryRow(ctx, `SHOW lock_timeout`).Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	pooled := a.db.pool.AcquireAllIdle(ctx)
	if len(pooled) == 0 {
		t.Fatal("no idle connection in the pool after the groups")
	}
	for _, pc := range pooled {
		var got string
		err := pc.QueryRow(ctx, `SHOW lock_timeout`).Scan(&got)
		pc.Release()
		if err != nil {
			t.Fatal(err)
		}
		if got != fresh {
			t.Errorf("a pooled connection's lock_timeout after session lock groups = %q, want a new connection's %q", got, fresh)
		}
	}
}

// TestALetGoGroupWaitingForOneRowLetsTheOthersGoAndThatOneOnceFree: a
// let-go group one of whose rows another transaction holds gives up after
// the row wait bound; the others' rows are gone while it is still held,
// and its own goes once it is free, not left to expire.
func TestALetGoGroupWaitingForOneRowLetsTheOthersGoAndThatOneOnceFree(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	ctx := context.Background()
	held := map[string]func(){}
	for _, id := range []string{"lead", "s0", "busy"} {
		if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
			t.Fatal(err)
		}
		u, err := a.LockSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		held[id] = u
	}
	tx, err := a.db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM locks WHERE tenant = $1 AND session_id = 'busy' AND name = 'session' FOR UPDATE`, a.tenant); err != nil {
		t.Fatal(err)
	}
	letGoTogether(t, a, func() func() { return holdLockWrites(t, dsn) }, held["lead"], []func(){held["s0"], held["busy"]}, func() {
		await(t, "session s0's lock row gone", func() bool { return lockRows(t, a, []string{"s0"}) == 0 })
		if n := lockRows(t, a, []string{"busy"}); n != 1 {
			t.Errorf("the busy session's lock row, held by another transaction: %d rows, want 1", n)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if n := lockRows(t, a, []string{"lead", "s0", "busy"}); n != 0 {
		t.Errorf("%d session lock rows left once the busy row was free, want 0", n)
	}
}
