package pgstore

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// deadReplica is a replica the test takes for another process: its lease
// owner and its liveness lock are that process's, not the test's.
func deadReplica(name string) (*replica, coordination.LeaseOwner) {
	r := replicaOf(name+".invalid", 4242, 77)
	return &r, coordination.LeaseOwner{ID: name, Host: r.host, PID: r.pid, ProcStart: r.start}
}

// otherProcess is a replica the test takes for another process (a, its
// DB, lease owner and replica) beside one of the test's own (b), on a
// fresh schema, with session "s" made through a. closeA ends a as a
// SIGKILL would end its LISTEN connection, once.
type otherProcess struct {
	dsn    string
	rep    *replica
	owner  coordination.LeaseOwner
	a, b   *Store
	closeA func()
}

func withOtherProcess(t *testing.T, name string) otherProcess {
	t.Helper()
	p := otherProcess{dsn: pgtest.Schema(t)}
	p.rep, p.owner = deadReplica(name)
	adb, err := Open(context.Background(), p.dsn, Options{replica: p.rep})
	if err != nil {
		t.Fatal(err)
	}
	p.closeA = sync.OnceFunc(adb.Close)
	t.Cleanup(p.closeA)
	p.a, p.b = forTenant(t, adb), replicaOn(t, p.dsn, Options{})
	if err := p.a.Create(context.Background(), storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	return p
}

// holdAs takes rep's liveness lock and registers it on a connection of its
// own, as rep's LISTEN connection does; letGo lets the lock go.
func holdAs(t *testing.T, st *Store, dsn string, rep *replica) heldAs {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.db.with(*rep).holdLiveness(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return heldAs{c: c, key: rep.key}
}

// heldAs is a replica's liveness lock held on a connection of its own.
type heldAs struct {
	c   *pgx.Conn
	key int64
}

// letGo ends the connection, as a SIGKILL ends it, with its lock let go
// first: the backend of a closed connection lets its locks go a moment
// after the close returns, and a look in that moment (one in five here)
// still found it held.
func (h heldAs) letGo() {
	ctx := context.Background()
	_, _ = h.c.Exec(ctx, `SELECT pg_advisory_unlock_shared($1)`, h.key)
	_ = h.c.Close(ctx)
}

// A replica whose process died (its connection to the database ended) is
// seen gone on the survivor's next looks, not a TTL later: its run lease
// and its step lease read expired and abandoned, the run is listed for a
// live replica to take up and is taken, and its step lock is taken at
// once. Without the liveness lock the lease read held for its whole TTL
// (a minute here), and the lock for lockTTL.
func TestADeadReplicasRunsAreTakenUpWithoutWaitingOutTheirTTL(t *testing.T) {
	p := withOtherProcess(t, "killed")
	ctx, a, b, owner, rep := context.Background(), p.a, p.b, p.owner, p.rep
	if _, err := a.AcquireRun(ctx, "s", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AcquireStep(ctx, "s", "agent_a", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.LockStep(ctx, "s", "agent_a"); err != nil {
		t.Fatal(err)
	}
	if mine, _, _, err := a.ClaimCall(ctx, "criteria", "killed.1", "", time.Minute); err != nil || !mine {
		t.Fatalf("claiming a call on the replica that dies: %v, %v", mine, err)
	}

	if err := b.db.reapOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if l := readRun(t, b); !l.Held(time.Now()) {
		t.Fatalf("a live replica's run lease after a look: %+v, want held", l)
	}
	p.closeA() // its LISTEN connection ends, as a SIGKILL ends it
	deadline := time.Now().Add(10 * reapEvery)
	for time.Now().Before(deadline) && readRun(t, b).Held(time.Now()) {
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(reapAfter / 3)
	}
	l := readRun(t, b)
	if !l.Abandoned(time.Now()) || l.Released {
		t.Fatalf("the dead replica's run lease: %+v, want abandoned, unreleased", l)
	}
	steps, err := b.ReadSteps(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if s := steps["agent_a"]; s == nil || !s.Abandoned(time.Now()) {
		t.Errorf("the dead replica's step lease: %+v, want abandoned", s)
	}
	ids, err := b.Abandoned(ctx)
	if err != nil || len(ids) != 1 || ids[0] != "s" {
		t.Errorf("runs a dead replica left: %v, %v; want [s]", ids, err)
	}
	if _, err := b.AcquireRun(ctx, "s", coordination.ThisProcess("b"), time.Minute); err != nil {
		t.Errorf("taking up the dead replica's run: %v", err)
	}
	took := make(chan error, 1)
	go func() {
		l, err := b.LockStep(ctx, "s", "agent_a")
		if err == nil {
			l.Release()
		}
		took <- err
	}()
	select {
	case err := <-took:
		if err != nil {
			t.Errorf("taking the dead replica's step lock: %v", err)
		}
	case <-time.After(lockTTL / 2):
		t.Error("the dead replica's step lock was not taken within half its TTL")
	}
	if mine, by, _, err := b.ClaimCall(ctx, "criteria", "b.1", "", time.Minute); err != nil || !mine {
		t.Errorf("claiming the dead replica's call: mine %v (held by %q), %v; want it taken", mine, by, err)
	}
	if n := registered(t, b, rep.key); n != 0 {
		t.Errorf("the dead replica is still registered (%d rows)", n)
	}
}

// A replica whose liveness lock is free only for a moment (its LISTEN
// connection made again, as listen does every 500 ms) is not reaped: a
// look that finds it held again forgets it was seen gone. One whose lock
// stays free is reaped only once reapAfter has passed since it was first
// seen so.
func TestAReplicaThatComesBackWithinAMomentIsNotReaped(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	b := replicaOn(t, dsn, Options{})
	rep, owner := deadReplica("flaky")
	if err := b.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireRun(ctx, "s", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	holdAs(t, b, dsn, rep).letGo()
	if err := b.db.reapOnce(ctx); err != nil { // seen gone
		t.Fatal(err)
	}
	c := holdAs(t, b, dsn, rep) // back
	defer c.letGo()
	if err := b.db.reapOnce(ctx); err != nil { // seen back
		t.Fatal(err)
	}
	c.letGo() // gone again, just now
	time.Sleep(reapAfter + 100*time.Millisecond)
	if err := b.db.reapOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if l := readRun(t, b); !l.Held(time.Now()) {
		t.Fatalf("a replica back within a moment, then gone for less than reapAfter: its run lease %+v, want held", l)
	}
	time.Sleep(max(reapAfter, reapSilent) + 100*time.Millisecond)
	if err := b.db.reapOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// Expired by the database's clock; a reader on another host than the
	// lease's gives it the clock allowance more, as for any expiry.
	if l := readRun(t, b); l.Expires.After(time.Now()) {
		t.Errorf("a replica gone for longer than reapAfter: its run lease %+v, want expired", l)
	}
}

// A replica that sees an outage reaps nobody while its excuse runs: every
// replica lost its connections then, and each is given its TTL to come
// back, as its leases are (coordination.OutageExcuses).
func TestNoReplicaIsReapedWhileAnOutageExcusesIt(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	b := replicaOn(t, dsn, Options{})
	rep, owner := deadReplica("cut-off")
	if err := b.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireRun(ctx, "s", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	holdAs(t, b, dsn, rep).letGo()
	b.db.outage.lostAt(time.Now())
	b.db.outage.heard(time.Now())
	for range 2 {
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(reapAfter + 100*time.Millisecond)
	}
	if l := readRun(t, b); !l.Held(time.Now()) {
		t.Errorf("a replica gone in an outage's excuse: its run lease %+v, want held", l)
	}
	if n := registered(t, b, rep.key); n != 1 {
		t.Errorf("a replica gone in an outage's excuse: %d rows registered, want 1", n)
	}
}

// with is db taken for replica r: its holdLiveness takes r's lock.
func (db *DB) with(r replica) *DB { return &DB{replica: r} }

func forTenant(t *testing.T, db *DB) *Store {
	t.Helper()
	st, err := db.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*Store)
}

func readRun(t *testing.T, st *Store) *coordination.RunLease {
	t.Helper()
	l, err := st.ReadRun(context.Background(), "s")
	if err != nil || l == nil {
		t.Fatalf("reading the run lease: %v, %v", l, err)
	}
	return l
}

func registered(t *testing.T, st *Store, key int64) int {
	t.Helper()
	var n int
	if err := st.db.pool.QueryRow(context.Background(), `SELECT count(*) FROM replicas WHERE lock_key = $1`, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A replica the database will not register (a role that may not write the
// replicas table, here a trigger refusing it) still opens and hears
// changes: it is seen dead only when its leases run out, as before.
func TestAReplicaTheDatabaseWillNotRegisterStillServes(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	b := replicaOn(t, dsn, Options{})
	if _, err := b.db.pool.Exec(ctx, `CREATE FUNCTION refuse_replicas() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'permission denied for table replicas' USING ERRCODE = '42501'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON replicas FOR EACH ROW EXECUTE FUNCTION refuse_replicas()`); err != nil {
		t.Fatal(err)
	}
	rep, _ := deadReplica("unregistered")
	db, err := Open(ctx, dsn, Options{replica: rep})
	if err != nil {
		t.Fatalf("opening a replica the database will not register: %v", err)
	}
	defer db.Close()
	a := forTenant(t, db)
	if err := b.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	changes, err := a.Watch(wctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AppendEvent(ctx, "s", coordination.Event{Type: "note", Message: "heard"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-wctx.Done():
		t.Fatal("the unregistered replica heard no change")
	}
	if n := registered(t, b, rep.key); n != 0 {
		t.Errorf("%d rows registered for a replica the database refused", n)
	}
}

// A look reaps one dead replica at most: each reap reads the whole leases
// table, and a look that reaped many at once could outlast its bound, roll
// back and begin again at every look. The next looks reap the others.
func TestALookReapsOneReplicaAtATime(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	b := replicaOn(t, dsn, Options{})
	for _, name := range []string{"first", "second"} {
		rep, _ := deadReplica(name)
		holdAs(t, b, dsn, rep).letGo()
	}
	if _, err := b.db.pool.Exec(ctx, `UPDATE replicas SET seen_gone_at = now() - interval '1 minute', beat_at = now() - interval '1 minute' WHERE lock_key <> $1`, b.db.replica.key); err != nil {
		t.Fatal(err)
	}
	left := func() int {
		var n int
		if err := b.db.pool.QueryRow(ctx, `SELECT count(*) FROM replicas WHERE lock_key <> $1`, b.db.replica.key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for want := 1; want >= 0; want-- {
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if n := left(); n != want {
			t.Fatalf("after a look: %d dead replicas registered, want %d", n, want)
		}
	}
}

// A reap is logged: a replica that held leases or locks as a warning (its
// runs are taken up), one that held nothing (a server stopped in a rolling
// restart) as news.
func TestAReapIsAWarningOnlyWhenTheDeadReplicaHeldSomething(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	logged := &coordtest.SyncBuffer{}
	b := replicaOn(t, dsn, Options{Logger: zerolog.New(logged)})
	if err := b.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	idle, _ := deadReplica("idle")
	busy, owner := deadReplica("busy")
	if _, err := b.AcquireRun(ctx, "s", owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, rep := range []*replica{idle, busy} {
		holdAs(t, b, dsn, rep).letGo()
	}
	if _, err := b.db.pool.Exec(ctx, `UPDATE replicas SET seen_gone_at = now() - interval '1 minute', beat_at = now() - interval '1 minute' WHERE lock_key <> $1`, b.db.replica.key); err != nil {
		t.Fatal(err)
	}
	for range 2 { // one reap a look
		if err := b.db.reapOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	levels := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(logged.String()), "\n") {
		var e struct{ Level, Host, Leases, Message string }
		if json.Unmarshal([]byte(line), &e) == nil && e.Host != "" {
			levels[e.Host] = e.Level + ": leases " + e.Leases
		}
	}
	if got, want := levels[idle.host], "info: leases 0"; got != want {
		t.Errorf("the reap of a replica that held nothing was logged as %q, want %q", got, want)
	}
	if got, want := levels[busy.host], "warn: leases 1"; got != want {
		t.Errorf("the reap of a replica that held a run was logged as %q, want %q", got, want)
	}
}
