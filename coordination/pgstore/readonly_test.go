package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// A connection left on a server that takes no writes (a failover's old
// primary, kept by a proxy) fails every write with 25006: the run pauses on
// it as an outage, and the connection is closed as it goes back to the
// pool, so the retry is made on a new one (checked read-write as it is
// made) rather than on it again.
func TestAConnectionOnAServerThatTakesNoWritesIsDropped(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	c, err := s.db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `SET default_transaction_read_only = on`); err != nil { // as a demoted server's
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, `UPDATE sessions SET tenant = tenant WHERE false`)
	if err == nil || !s.Unavailable(err) {
		t.Fatalf("a write on a read-only server = %v, want an outage to pause on", err)
	}
	pid := c.Conn().PgConn().PID() // its server process, gone once the pool closes it
	c.Release()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var open bool
		if err := s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection that answered 25006 went back to the pool open")
		}
	}
	if err := s.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatalf("a write after the read-only connection was dropped: %v", err)
	}
}

// A replica pointed at a server that takes no writes is refused at Open,
// saying so and what to do, not told the server "does not answer".
func TestAReplicaPointedAtAServerThatTakesNoWritesIsRefused(t *testing.T) {
	dsn := pgtest.Schema(t)
	replicaOn(t, dsn, Options{}) // the schema made
	sep := "&"
	if !strings.Contains(dsn, "?") {
		sep = "?"
	}
	_, err := Open(context.Background(), dsn+sep+"options=-c%20default_transaction_read_only%3Don", Options{})
	if err == nil || !strings.Contains(err.Error(), "takes no writes") || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("Open on a read-only server = %v, want it refused as taking no writes", err)
	}
}
