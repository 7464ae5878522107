package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// TestTakingALockDoesNotWaitForTheWALFlush: the lock take's own statement
// turns synchronous_commit off for its transaction when it takes the row of
// a stored session (whose row the foreign key share-locks, a logged write).
// Run inside an explicit transaction that first sets it on, so the setting
// the take made can still be read and a server whose default is off cannot
// pass it; without the cfg CTE, or with it left unread (a CTE nothing refers
// to never runs), synchronous_commit reads on. A missing session's take
// writes nothing, so it has no flush to skip; only its answer is checked.
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
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = on"); err != nil {
			t.Fatal(err)
		}
		var got, setting string
		var found bool
		if err := tx.QueryRow(ctx, lockTake, s.tenant, tc.session, "session", "tok-1", lockTTL.Milliseconds(), nil).Scan(&got, &found, new(time.Time)); err != nil {
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

// TestALockTakeLeavesItsConnectionsCommitsSynchronous: the setting is the
// take's transaction's alone (set_config's third argument): on a pool of one
// connection, the next statement after a take, a landing say, still waits
// for its flush.
func TestALockTakeLeavesItsConnectionsCommitsSynchronous(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := s.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	cfg := s.db.pool.Config()
	cfg.MaxConns, cfg.MinConns = 1, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var before string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&before); err != nil {
		t.Fatal(err)
	}
	if before != "on" {
		t.Skipf("this server's synchronous_commit is %q, so a leak could not be seen", before)
	}
	var got string
	var found bool
	if err := pool.QueryRow(ctx, lockTake, s.tenant, "s", "session", "tok-1", lockTTL.Milliseconds(), nil).Scan(&got, &found, new(time.Time)); err != nil || got != "tok-1" {
		t.Fatalf("the take = %q, %v", got, err)
	}
	var after string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != "on" {
		t.Fatalf("after a lock take its connection's synchronous_commit is %q: every later commit on it, a landing's included, would skip the WAL flush", after)
	}
}

// TestAClaimInALockBatchGetsTheSessionsDurabilityBack: the statement the
// claim fold sends after the take (which turned synchronous_commit off for
// the transaction) sets it back to the connection's reset value, the one
// pg_settings' reset_val names, when its condition holds, and leaves it off
// when it does not (no claim is written then). A server whose own default
// is off could not tell the two apart, so it is skipped there.
func TestAClaimInALockBatchGetsTheSessionsDurabilityBack(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	var reset string
	if err := s.db.pool.QueryRow(ctx, "SELECT reset_val FROM pg_settings WHERE name = 'synchronous_commit'").Scan(&reset); err != nil {
		t.Fatal(err)
	}
	if reset == "off" {
		t.Skipf("this server's synchronous_commit resets to %q, so a restore could not be seen", reset)
	}
	for _, tc := range []struct {
		cond string
		want string
	}{{"true", reset}, {"false", "off"}} {
		tx, err := s.db.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('synchronous_commit', 'off', true)"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, syncCommitRestoring+tc.cond); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := tx.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback(ctx)
		if got != tc.want {
			t.Fatalf("condition %s: synchronous_commit reads %q after the restore, want %q", tc.cond, got, tc.want)
		}
	}
}
