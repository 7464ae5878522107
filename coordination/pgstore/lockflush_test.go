package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
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
	sessionsOn(t, s, "s")
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
	sessionsOn(t, s, "s")
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

// TestAClaimInALockBatchGetsTheSessionsDurabilityBack: a step lease's
// claim sent in its lock's batch (claimFold), after the take turned
// synchronous_commit off for the transaction, sets it back to the
// connection's reset value (pg_settings' reset_val) when it writes, for an
// agent's first claim (an insert) and a later one (the known row's update),
// and writes nothing and leaves it off when the batch's take does not hold
// the lock. A server whose own default is off could not tell these apart,
// so it is skipped there.
func TestAClaimInALockBatchGetsTheSessionsDurabilityBack(t *testing.T) {
	s := replicaOn(t, pgtest.Schema(t), Options{})
	reset := durableReset(t, s)
	sessionsOn(t, s, "s")
	heldByAnother(t, s, "s", "agent_a")
	first := firstClaim()
	second := first
	second.Version, second.ChainFrom = 2, 2
	// send runs f in a transaction whose synchronous_commit is off, as the
	// take leaves it, and reports the setting after it; commit keeps what
	// it wrote.
	send := func(f *claimFold, token string, commit bool) string {
		t.Helper()
		end := "ROLLBACK"
		if commit {
			end = "COMMIT"
		}
		return syncCommitAfter(t, s, end, func(b *pgx.Batch) {
			b.Queue("SELECT set_config('synchronous_commit', 'off', true)")
			f.queue(b, s.tenant, "s", "agent_a", "step:agent_a", token)
		}, func(br pgx.BatchResults) error {
			if _, err := br.Exec(); err != nil {
				return err
			}
			return f.read(br)
		})
	}
	for _, tc := range []struct {
		name    string
		fold    *claimFold
		token   string
		claimed bool
		want    string
	}{
		{"a first claim under another holder's lock", &claimFold{next: first}, "tok-other", false, "off"},
		{"a first claim", &claimFold{next: first}, "tok-held", true, reset},
		{"a later claim under another holder's lock", &claimFold{known: true, cur: first, next: second}, "tok-other", false, "off"},
		{"a later claim", &claimFold{known: true, cur: first, next: second}, "tok-held", true, reset},
	} {
		got := send(tc.fold, tc.token, tc.claimed)
		if tc.fold.claimed != tc.claimed || got != tc.want {
			t.Errorf("%s: claimed %v, synchronous_commit %q after it; want claimed %v, %q", tc.name, tc.fold.claimed, got, tc.claimed, tc.want)
		}
	}
}
