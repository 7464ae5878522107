package pgstore

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestTakingALockDoesNotWaitForTheWALFlush: the lock take's own statement
// turns synchronous_commit off for its transaction when it takes the row of
// a stored session (whose row the foreign key share-locks, a logged write).
// Run inside an explicit transaction, so the setting it made can still be
// read; without the cfg CTE, or with it left unread (a CTE nothing refers to
// never runs), synchronous_commit reads on. A missing session's take writes
// nothing, so it has no flush to skip; only its answer is checked.
func TestTakingALockDoesNotWaitForTheWALFlush(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := s.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		session   string
		wantToken string
		wantFound bool
	}{{"s", "tok-1", true}, {"missing", "", false}} {
		tx, err := s.db.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got, setting string
		var found bool
		if err := tx.QueryRow(ctx, lockTake, s.tenant, tc.session, "session", "tok-1", lockTTL.Milliseconds()).Scan(&got, &found); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(ctx, "SHOW synchronous_commit").Scan(&setting); err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback(ctx)
		if got != tc.wantToken || found != tc.wantFound {
			t.Fatalf("session %q: took %q (found %v), want %q (found %v)", tc.session, got, found, tc.wantToken, tc.wantFound)
		}
		if tc.wantFound && setting != "off" {
			t.Fatalf("session %q: the lock take left synchronous_commit %q, so its commit waits for the WAL flush the foreign key's row lock asks for", tc.session, setting)
		}
	}
}
