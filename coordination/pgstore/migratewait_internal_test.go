package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAStartWaitsForAnotherReplicasMigrationsPastTheRolesLockTimeout: a
// replica whose connections carry a lock_timeout (the operator's, for a
// step's rows) starts while another replica holds the migration lock for
// longer than it. The start must wait for the lock, as replicas starting
// together do, not fail with "canceling statement due to lock timeout".
func TestAStartWaitsForAnotherReplicasMigrationsPastTheRolesLockTimeout(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	conn := pgtest.Conn(t, dsn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		t.Fatal(err)
	}
	// The hold ends on a goroutine the test waits for before it returns and
	// the connection is closed, so the two never use it at once.
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(600 * time.Millisecond)
		_ = tx.Rollback(ctx)
	}()
	db, err := Open(ctx, dsn+"&lock_timeout=100ms", Options{Logger: zerolog.Nop()})
	<-released
	if err != nil {
		t.Fatalf("a replica whose role waits 100 ms for a lock could not start while another held the migration lock for 600 ms: %v", err)
	}
	db.Close()
}
