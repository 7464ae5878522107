package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// sessionLockRow is the token of the session lock's row, "" for none.
func sessionLockRow(t *testing.T, s *Store, id string) string {
	t.Helper()
	var tok string
	err := s.db.pool.QueryRow(context.Background(), `SELECT coalesce((SELECT token FROM locks WHERE tenant = $1 AND session_id = $2 AND name = 'session'), '')`, s.tenant, id).Scan(&tok)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// takeSessionRow hands the session lock's row to another holder, as
// another replica's take does once the row expired under a starved
// heartbeat, or once a crash emptied the table.
func takeSessionRow(t *testing.T, s *Store, id, token string) {
	t.Helper()
	if _, err := s.db.pool.Exec(context.Background(), `UPDATE locks SET token = $3 WHERE tenant = $1 AND session_id = $2 AND name = 'session'`, s.tenant, id, token); err != nil {
		t.Fatal(err)
	}
}

// sessionLog counts the session's entries of a kind.
func sessionLog(t *testing.T, s *Store, id string, kind coordination.SessionEntryKind) int {
	t.Helper()
	l, err := s.Ledger(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range l.Session {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// TestAHolderWhoseSessionLockPassedToAnotherRecordsNoDecision: the holder
// of a session lock whose row another replica now holds writes no session
// entry (two holders would both record the end); it is told the store is
// unavailable, so it takes the lock again, and the other holder's row is
// left alone. Holding the lock again, it records.
func TestAHolderWhoseSessionLockPassedToAnotherRecordsNoDecision(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	takeSessionRow(t, a, "s", "another-replicas")
	_, err = a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "a decision"})
	if !errors.Is(err, coordination.ErrStoreUnavailable) {
		t.Fatalf("a session entry written under a lock another holder has: %v; want ErrStoreUnavailable", err)
	}
	if n := sessionLog(t, a, "s", coordination.SessionCancelled); n != 0 {
		t.Fatalf("%d entries were recorded by a holder that lost its lock; want none", n)
	}
	unlock()
	if got := sessionLockRow(t, a, "s"); got != "another-replicas" {
		t.Fatalf("the other holder's row reads %q after the first let go; want it left alone", got)
	}
	// The other holder lets go; the first takes the lock again and records.
	if _, err := a.db.pool.Exec(ctx, `DELETE FROM locks WHERE token = 'another-replicas'`); err != nil {
		t.Fatal(err)
	}
	unlock, err = a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled, Reason: "a decision"}); err != nil {
		t.Fatal(err)
	}
	if n := sessionLog(t, a, "s", coordination.SessionCancelled); n != 1 {
		t.Errorf("%d entries recorded under the lock taken again; want one", n)
	}
}

// TestASessionLockRowTheDatabaseLostIsTakenBackByTheWrite: a row a crash
// emptied (nobody took it since) is still the holder's: its write puts it
// back and lands.
func TestASessionLockRowTheDatabaseLostIsTakenBackByTheWrite(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	held := sessionLockRow(t, a, "s")
	if _, err := a.db.pool.Exec(ctx, `DELETE FROM locks`); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled}); err != nil {
		t.Fatalf("a write under a lock the database lost: %v; want it landed", err)
	}
	if got := sessionLockRow(t, a, "s"); got != held {
		t.Errorf("the lock's row reads %q after the write; want the holder's %q back", got, held)
	}
	unlock()
	if got := sessionLockRow(t, a, "s"); got != "" {
		t.Errorf("the lock's row reads %q after the holder let go; want none", got)
	}
}

// TestAWriteBesideAHolderThatLetGoLeavesNoLockBehind: a session entry
// written by a caller that does not hold the lock, beside one of this
// process that does and lets go meanwhile, leaves no row that nobody
// renews (which would lock the session out until it expired).
func TestAWriteBesideAHolderThatLetGoLeavesNoLockBehind(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	token := a.db.held.sessionToken(a.tenant, "s")
	unlock()
	// The write read the token before the unlock and runs after it: its
	// fence puts the row back, and it deletes it once committed.
	err = a.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sessionFence, a.tenant, "s", token, lockTTL.Milliseconds())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionLockRow(t, a, "s"); got != token {
		t.Fatalf("the fence did not put the row back (%q): the test shows nothing", got)
	}
	a.unfenced("s", token)
	if got := sessionLockRow(t, a, "s"); got != "" {
		t.Errorf("the lock's row reads %q after a write beside a holder that let go; want none", got)
	}
}

// TestAHostLandingUnderASessionLockAnotherHoldsLandsNothing: a landing
// whose cancels were counted in Go under the session lock (a host's step)
// lands nothing once another holder has that lock's row (it may be
// recording a cancel); its caller is told to try again, and its step lock
// is still its own.
func TestAHostLandingUnderASessionLockAnotherHoldsLandsNothing(t *testing.T) {
	a := replicaOn(t, pgtest.Schema(t), Options{})
	ctx := context.Background()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	takeSessionRow(t, a, "s", "another-replicas")
	e := coordination.Entry{Kind: coordination.KindAnswer, Content: "an answer", Label: "agent_a.1"}
	if _, err := l.Append(ctx, e); !errors.Is(err, coordination.ErrStoreUnavailable) || errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("a landing under a session lock another holds: %v; want ErrStoreUnavailable, not a lost step lock", err)
	}
	led, err := a.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(led.Agents["agent_a"]); n != 0 {
		t.Fatalf("%d entries landed; want none", n)
	}
	unlock()
	if _, err := a.db.pool.Exec(ctx, `DELETE FROM locks WHERE token = 'another-replicas'`); err != nil {
		t.Fatal(err)
	}
	unlock, err = a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := l.Append(ctx, e); err != nil {
		t.Fatalf("the landing tried again under the lock taken again: %v", err)
	}
}
