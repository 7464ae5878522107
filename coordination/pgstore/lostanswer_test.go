package pgstore

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	readiness "github.com/massgen-go/massgen-mcp/internal/await" // pgstore's tests have an await of their own
)

// lostAnswer is the stage of every test of a change whose answer was lost
// with its connection (notifylost*_test.go, notifyindoubt_test.go): replica
// a on a schema of its own, session "s" made through it, what a's watcher
// hears of s, and replicas beside a whose connections the test cuts.
type lostAnswer struct {
	t       *testing.T
	dsn     string
	a       *Store
	changes <-chan coordination.Change
}

// newLostAnswer sets the stage. The watch begins at once, before the
// test's own writes: one begun later may hear an earlier write's NOTIFY
// still on its way and take it for the one under test.
func newLostAnswer(t *testing.T) *lostAnswer {
	t.Helper()
	dsn := pgtest.Schema(t)
	a := replicaOn(t, dsn, Options{})
	if err := a.Create(context.Background(), storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	changes, err := a.Watch(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	return &lostAnswer{t: t, dsn: dsn, a: a, changes: changes}
}

// beside is a replica beside a whose every connection is wrap of the one
// dialled (besideOn).
func (l *lostAnswer) beside(wrap func(net.Conn) net.Conn) *Store {
	l.t.Helper()
	return besideOn(l.t, l.dsn, l.a, wrap)
}

// besideOn is a replica beside a on dsn (its schema, channel and tenant)
// whose every connection is wrap of the one dialled, closed when the test
// ends, a look for changes in doubt with it. It is made on a pool of its
// own, not opened: it has no listener or heartbeat, whose connections a
// cut would take too.
func besideOn(t testing.TB, dsn string, a *Store, wrap func(net.Conn) net.Conn) *Store {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := newDB(pool, a.db.channel, Options{})
	t.Cleanup(db.Close)
	return &Store{db: db, tenant: a.tenant}
}

// heard tells whether a's watcher hears, within d, a change that want
// holds.
func (l *lostAnswer) heard(want func(coordination.Change) bool, d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case c := <-l.changes:
			if want(c) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// notYetHeard fails the test if a's watcher hears a change that want
// holds within 300 ms: the write under test must have lost its own NOTIFY,
// or the test tests nothing.
func (l *lostAnswer) notYetHeard(want func(coordination.Change) bool, what string) {
	l.t.Helper()
	if l.heard(want, 300*time.Millisecond) {
		l.t.Fatalf("the other replica heard %s whose NOTIFY never reached the server, which tests nothing", what)
	}
}

// mustHear fails the test unless a's watcher hears, within heardWithin, a
// change that want holds; why says what it must hear of.
func (l *lostAnswer) mustHear(want func(coordination.Change) bool, why string) {
	l.t.Helper()
	if !l.heard(want, heardWithin) {
		l.t.Fatalf("the other replica did not hear within %v of %s (no NOTIFY was sent for it)", heardWithin, why)
	}
}

// What a change tells, for heard and its kin.
func stepsChanged(c coordination.Change) bool       { return c.Steps }
func sessionChanged(c coordination.Change) bool     { return c.Session }
func permissionsChanged(c coordination.Change) bool { return c.Permissions }

// waitForRows waits up to readiness.Slow for session s to have n rows of
// table, as a's pool reads it: the server runs what reached it after the
// client gave up, on a machine CI may load with race builds beside it, and
// nothing here measures how soon (storedAfterCut's reason). It fails the
// test if it has not.
func (l *lostAnswer) waitForRows(table string, n int, what string) {
	l.t.Helper()
	for end := time.Now().Add(readiness.Slow); rows(l.t, l.a, table) != n && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := rows(l.t, l.a, table); got != n {
		l.t.Fatalf("%d %s stored, want %d", got, what, n)
	}
}
