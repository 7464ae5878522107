package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// replicas opens n stores on one fresh schema, each with its own pool,
// listener and heartbeat: n replicas sharing a database.
func replicas(t *testing.T, n int) []*Store {
	t.Helper()
	dsn := pgtest.Schema(t)
	var out []*Store
	for range n {
		db, err := Open(context.Background(), dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		st, err := db.For(coordination.DefaultTenant)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st.(*Store))
	}
	return out
}

// claimRun is what a service does to take over a run: the run lock, then
// the run lease (coordination's claimRun).
func claimRun(ctx context.Context, st *Store, id, owner string) (unlock func(), l coordination.RunLease, err error) {
	unlock, err = st.LockRun(ctx, id)
	if err != nil {
		return nil, l, err
	}
	l, err = st.AcquireRun(ctx, id, coordination.ThisProcess(owner), time.Minute)
	if err != nil {
		unlock()
		return nil, l, err
	}
	return unlock, l, nil
}

// TestTwoReplicasClaimAnExpiredRunOneWins: a run whose holder died (its
// lease expired, its run lock's row expired) is claimed by two replicas at
// the same moment, 100 times; each time exactly one wins, the other is told
// the run is running, and the winner's version is one more than the dead
// holder's.
func TestTwoReplicasClaimAnExpiredRunOneWins(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	const id = "s"
	if err := a.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	dead := coordination.LeaseOwner{ID: "dead", Host: coordination.ThisHost(), PID: 1 << 22}
	for round := range 100 {
		// The dead replica's claim: a run lease that expired and a run
		// lock row nobody renews.
		l, err := a.AcquireRun(ctx, id, dead, time.Millisecond)
		if err != nil {
			t.Fatalf("round %d: the dead holder's claim: %v", round, err)
		}
		if _, err := a.db.pool.Exec(ctx, `INSERT INTO locks (tenant, session_id, name, token, expires_at) VALUES ($1, $2, 'run', 'dead', now() - interval '1 second')`, a.tenant, id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)

		type claim struct {
			who    string
			unlock func()
			l      coordination.RunLease
			err    error
		}
		start := make(chan struct{})
		got := make(chan claim, 2)
		var wg sync.WaitGroup
		for who, st := range map[string]*Store{"a": a, "b": b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				unlock, l, err := claimRun(ctx, st, id, who)
				got <- claim{who, unlock, l, err}
			}()
		}
		close(start)
		wg.Wait()
		close(got)
		var won []claim
		for c := range got {
			switch {
			case c.err == nil:
				won = append(won, c)
			case !errors.Is(c.err, coordination.ErrSessionRunning):
				t.Fatalf("round %d: replica %s's claim failed with %v, want ErrSessionRunning", round, c.who, c.err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d replicas won the claim, want exactly 1", round, len(won))
		}
		w := won[0]
		if w.l.Version != l.Version+1 || w.l.ID != w.who {
			t.Fatalf("round %d: the winner's lease = %+v, want %s's at version %d", round, w.l, w.who, l.Version+1)
		}
		if _, err := a.RenewRun(ctx, id, l.Version, time.Minute); !errors.Is(err, coordination.ErrLeaseLost) {
			t.Fatalf("round %d: the dead holder's renew = %v, want ErrLeaseLost (fenced)", round, err)
		}
		// The winner ends its run; the next round's dead holder takes over.
		if err := a.ReleaseRun(ctx, id, w.l.Version); err != nil {
			t.Fatal(err)
		}
		w.unlock()
	}
}

// TestTwoReplicasRaceForAnExpiredLeaseOneWins is the claim race on the
// lease row alone (no run lock before it), where FOR UPDATE SKIP LOCKED
// decides: 100 rounds, exactly one claim wins each.
func TestTwoReplicasRaceForAnExpiredLeaseOneWins(t *testing.T) {
	rs := replicas(t, 2)
	ctx := context.Background()
	if err := rs[0].Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	dead := coordination.LeaseOwner{ID: "dead", Host: coordination.ThisHost(), PID: 1 << 22}
	skipped := 0
	for round := range 100 {
		l, err := rs[0].AcquireRun(ctx, "s", dead, time.Millisecond)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		time.Sleep(2 * time.Millisecond)
		errs := make([]error, 2)
		vers := make([]int64, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, st := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got, err := st.AcquireRun(ctx, "s", coordination.ThisProcess(fmt.Sprint("r", i)), time.Minute)
				errs[i], vers[i] = err, got.Version
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
				if vers[i] != l.Version+1 {
					t.Fatalf("round %d: the winner's version %d, want %d", round, vers[i], l.Version+1)
				}
				if err := rs[i].ReleaseRun(ctx, "s", vers[i]); err != nil {
					t.Fatal(err)
				}
			case errors.Is(err, coordination.ErrSessionRunning):
				var re *coordination.RunningError
				if errors.As(err, &re) && re.By == claimingNow {
					skipped++
				}
			default:
				t.Fatalf("round %d: claim %d = %v, want ErrSessionRunning", round, i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d claims won, want exactly 1 (%v)", round, wins, errs)
		}
	}
	t.Logf("%d of 100 losers passed the locked row by (SKIP LOCKED), the others found it claimed", skipped)
}

// expireLock makes a lock row look as if its holder died long ago.
func expireLock(t *testing.T, st *Store, id, name string) {
	t.Helper()
	tag, err := st.db.pool.Exec(context.Background(), `UPDATE locks SET expires_at = now() - interval '1 second'
		WHERE tenant = $1 AND session_id = $2 AND name = $3`, st.tenant, id, name)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("expiring lock %s: %v (%d rows)", name, err, tag.RowsAffected())
	}
}

// TestAStepIsNeverRecordedTwice: a replica whose step lock expired (it
// stalled, its heartbeat stopped) and was taken over writes nothing when it
// wakes: its Append is fenced; and the ledger's key refuses a second row for
// a landed step whatever the writer.
func TestAStepIsNeverRecordedTwice(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	la, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	a.db.held.remove(a.tenant, la.(*stepLock).token) // a's heartbeat stalls
	expireLock(t, a, "s", "step:agent_a")
	lb, err := b.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatalf("b's step lock after a's expired: %v", err)
	}
	if la.Step() != 1 || lb.Step() != 1 {
		t.Fatalf("steps %d and %d, want both 1 (the same step, taken over)", la.Step(), lb.Step())
	}
	if _, err := lb.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "b's"}); err != nil {
		t.Fatal(err)
	}
	lb.Release()
	if _, err := la.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "a's, late"}); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("the stalled replica's Append = %v, want ErrLeaseLost", err)
	}
	la.Release()
	_, err = a.db.pool.Exec(ctx, `INSERT INTO entries (tenant, session_id, agent_id, step, kind, at, entry)
		VALUES ($1, 's', 'agent_a', 1, 'answer', now(), '{}')`, a.tenant)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("a second row for step 1 = %v, want a unique violation", err)
	}
	l, err := b.Ledger(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if es := l.Agents["agent_a"]; len(es) != 1 || es[0].Content != "b's" {
		t.Fatalf("agent_a's entries = %+v, want only b's step 1", es)
	}
}

// TestWatchSeesAnotherReplicasChanges: a watch on one replica hears a step,
// a session entry and an event made through another within a second
// (LISTEN/NOTIFY).
func TestWatchSeesAnotherReplicasChanges(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	ch, err := b.Watch(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "391"}); err != nil {
		t.Fatal(err)
	}
	// Timed from the append's commit, which notifies: taking the lock and
	// appending are round trips to a database a loaded CI shares with other
	// test binaries, no part of the crossing, and counting them left the
	// second little room.
	start := time.Now()
	l.Release()
	storetest.AwaitChange(t, ch, coordination.Change{Steps: true})
	t.Logf("a step on replica a reached a watch on replica b in %v", time.Since(start))
	if d := time.Since(start); d > time.Second {
		t.Errorf("the change took %v to cross replicas, want under 1s", d)
	}
	if _, err := a.AppendSession(ctx, "s", coordination.SessionEntry{Kind: coordination.SessionCancelled}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Session: true})
	if err := a.AppendEvent(ctx, "s", coordination.Event{Type: "x", Message: "y"}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Events: true})
	// An ask raised, answered and audited on a shows on b's views at once
	// (the web page and the live view list pending asks).
	now := time.Now().UTC()
	if err := a.RequestApproval(ctx, "s", permissions.ApprovalRequest{ID: "ask1", Session: "s", Agent: "agent_a", Asked: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Permissions: true})
	if err := a.AnswerApproval(ctx, "s", permissions.ApprovalResponse{ID: "ask1", Approve: true, By: "test", At: now}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Permissions: true})
	if err := a.AppendPermission(ctx, "s", permissions.Record{Time: now, Agent: "agent_a", Outcome: permissions.Approved}); err != nil {
		t.Fatal(err)
	}
	storetest.AwaitChange(t, ch, coordination.Change{Permissions: true})
}

// TestALiveReplicasLocksOutlastTheirTTL: the heartbeat renews a live
// replica's lock rows, so another replica cannot take them after lockTTL
// (a dead one's expire: TestAStepIsNeverRecordedTwice).
func TestALiveReplicasLocksOutlastTheirTTL(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past the lock TTL")
	}
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	unlock, err := a.LockRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	time.Sleep(lockTTL + lockBeat)
	if _, err := b.LockRun(ctx, "s"); !errors.Is(err, coordination.ErrSessionRunning) {
		t.Fatalf("b's LockRun while a's heartbeat renews the lock = %v, want ErrSessionRunning", err)
	}
}

// TestBlobsAreContentAddressedDeduplicatedAndCapped round-trips a blob of
// several chunks, stores the same content again as one, and refuses one
// over the limit leaving nothing behind.
func TestBlobsAreContentAddressedDeduplicatedAndCapped(t *testing.T) {
	st := replicas(t, 1)[0]
	ctx := context.Background()
	content := make([]byte, 3*blobChunk+123)
	for i := range content {
		content[i] = byte(i * 7)
	}
	sum, n, err := st.PutBlob(ctx, bytesReader(content), 0)
	if err != nil || n != int64(len(content)) {
		t.Fatalf("PutBlob = %s, %d, %v", sum, n, err)
	}
	again, _, err := st.PutBlob(ctx, bytesReader(content), 0)
	if err != nil || again != sum {
		t.Fatalf("the same content again = %s, %v; want %s", again, err, sum)
	}
	var chunks int
	if err := st.db.pool.QueryRow(ctx, `SELECT count(*) FROM blob_chunks WHERE tenant = $1`, st.tenant).Scan(&chunks); err != nil || chunks != 4 {
		t.Fatalf("%d chunks stored (%v), want 4: the content once", chunks, err)
	}
	r, size, err := st.OpenBlob(ctx, sum)
	if err != nil || size != int64(len(content)) {
		t.Fatalf("OpenBlob = %d, %v", size, err)
	}
	got, err := readAll(r)
	if err != nil || string(got) != string(content) {
		t.Fatalf("read back %d bytes (%v), want the %d stored", len(got), err, len(content))
	}
	if _, _, err := st.PutBlob(ctx, bytesReader(content), blobChunk); !errors.Is(err, ErrBlobTooLarge) {
		t.Fatalf("PutBlob over the limit = %v, want ErrBlobTooLarge", err)
	}
	if err := st.db.pool.QueryRow(ctx, `SELECT count(*) FROM blob_chunks WHERE tenant = $1`, st.tenant).Scan(&chunks); err != nil || chunks != 4 {
		t.Fatalf("a refused blob left chunks: %d (%v)", chunks, err)
	}
	if _, _, err := st.OpenBlob(ctx, fmt.Sprintf("%064d", 0)); !errors.Is(err, ErrBlobNotFound) {
		t.Fatalf("OpenBlob of an unknown hash = %v, want ErrBlobNotFound", err)
	}
}

// TestADamagedBlobReadsAsDamaged: a blob missing a chunk is a short read
// (before, it ended early as if whole), and an image whose chunk was
// changed is refused rather than sent to a model.
func TestADamagedBlobReadsAsDamaged(t *testing.T) {
	st := replicas(t, 1)[0]
	ctx := context.Background()
	content := make([]byte, 2*blobChunk+5)
	for i := range content {
		content[i] = byte(i * 11)
	}
	sum, _, err := st.PutBlob(ctx, bytesReader(content), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.pool.Exec(ctx, `DELETE FROM blob_chunks WHERE tenant = $1 AND blob = $2 AND n = 2`, st.tenant, sum); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.OpenBlob(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(r); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a blob missing its last chunk read %d of %d bytes with %v, want io.ErrUnexpectedEOF", len(got), len(content), err)
	}
	img, err := st.PutImage(ctx, "s", []byte("\x89PNG not really an image"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.pool.Exec(ctx, `UPDATE blob_chunks SET data = decode(repeat('41', length(data)), 'hex') WHERE tenant = $1 AND blob = $2`, st.tenant, img); err != nil {
		t.Fatal(err)
	}
	if data, err := st.Image(ctx, "s", img); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a changed image read as %q, %v; want refused as damaged", data, err)
	}
}

// TestWatchSurvivesALostListenConnection: the LISTEN connection is cut (as
// a network blip or a database restart cuts it); the listener reconnects,
// tells its watchers to read again, and goes on hearing other replicas.
func TestWatchSurvivesALostListenConnection(t *testing.T) {
	dsn := pgtest.Schema(t)
	// The listener's server process, known by its own connection: its
	// last statement may be the quiet spell's question, not LISTEN.
	var listener atomic.Int32
	a := replicaOn(t, dsn, Options{})
	b := replicaOn(t, dsn, Options{listening: func(_ context.Context, c *pgx.Conn) error {
		listener.Store(int32(c.PgConn().PID()))
		return nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	ch, err := b.Watch(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var cut bool
	if err := a.db.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, listener.Load()).Scan(&cut); err != nil || !cut {
		t.Fatalf("cutting the listener's connection: %v (%v)", err, cut)
	}
	// The reconnect tells the watcher to read again.
	storetest.AwaitChange(t, ch, coordination.Change{Steps: true, Session: true, Events: true})
	time.Sleep(200 * time.Millisecond)
	l, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "after the cut"}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	storetest.AwaitChange(t, ch, coordination.Change{Steps: true})
}

// TestSessionLockIsExclusiveAcrossReplicas: one replica's session lock
// keeps another's waiting, and the waiter gets it once it is let go.
func TestSessionLockIsExclusiveAcrossReplicas(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.LockSession(short, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("b's LockSession while a holds it = %v, want context.DeadlineExceeded", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := b.LockSession(ctx, "s")
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b never got the session lock a let go")
	}
}

// TestAnAcknowledgedCancelIsKeptAcrossReplicas: a cancel_team on one
// replica that said "cancelled" is kept by the run on another: no reply
// lands after it, no starting run lifts it (coordtest.CancelKept).
func TestAnAcknowledgedCancelIsKeptAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.CancelKept(t, rs[0], rs[1])
}

// TestAStepInFlightOnAnotherReplicaIsJoined: a step asked of replica B
// while replica A has it in flight answers with A's landing.
func TestAStepInFlightOnAnotherReplicaIsJoined(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.StepJoined(t, rs[0], rs[1])
}

// TestAFinalizeOnAnotherReplicaIsWrittenByTheRunsHolder: finalize_team on
// replica B for a run on replica A.
func TestAFinalizeOnAnotherReplicaIsWrittenByTheRunsHolder(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.FinalizeElsewhere(t, rs[0], rs[1])
}

// TestADeadReplicasRunReadsInterruptedOnceItsLeaseExpires: team_status of a
// session whose replica died says interrupted past the lease's expiry.
func TestADeadReplicasRunReadsInterruptedOnceItsLeaseExpires(t *testing.T) {
	coordtest.DeadHolderReadsInterrupted(t, replicas(t, 1)[0])
}

// TestLockRowsTheDatabaseLostAreTakenBack: a crash of the database empties
// the unlogged locks table under held locks. The holder's step still lands
// (its append takes the row back), its heartbeat puts the run lock's row
// back within a beat, and the other replica is then refused the run; a row
// another replica holds is never taken.
func TestLockRowsTheDatabaseLostAreTakenBack(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	unlock, err := a.LockRun(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	step, err := a.LockStep(ctx, "s", "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `TRUNCATE locks`); err != nil { // what crash recovery does
		t.Fatal(err)
	}
	if _, err := step.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "landed across the crash"}); err != nil {
		t.Fatalf("a step whose lock row the database lost: %v, want it recorded", err)
	}
	step.Release()
	waitRow := time.Now().Add(2*lockBeat + time.Second)
	for {
		var n int
		if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE session_id = 's' AND name = 'run'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(waitRow) {
			t.Fatalf("the run lock's row is not back %v after the crash", 2*lockBeat+time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := b.LockRun(ctx, "s"); err == nil {
		t.Fatal("the other replica took the run lock its holder still holds")
	}
	// A row another replica holds stays its own.
	other, err := a.LockStep(ctx, "s", "agent_b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.db.pool.Exec(ctx, `UPDATE locks SET token = 'b-token' WHERE name = 'step:agent_b'`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append(ctx, coordination.Entry{Kind: coordination.KindAnswer, Content: "x"}); !errors.Is(err, coordination.ErrLeaseLost) {
		t.Fatalf("an append whose lock row another replica holds = %v, want ErrLeaseLost", err)
	}
	other.Release()
}

// TestAHeartbeatDoesNotPutBackALockLetGoMeanwhile: a lock released after
// the heartbeat took its snapshot is not mistaken for a row the database
// lost: the renew leaves no row behind, and the session can be locked at
// once (a row put back would block it for the lock's whole TTL).
func TestAHeartbeatDoesNotPutBackALockLetGoMeanwhile(t *testing.T) {
	a, b := sessionOnTwoReplicas(t, "s")
	ctx := context.Background()
	unlock, err := a.LockSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	snapshot := a.db.held.snapshot() // the heartbeat's view: the lock held
	unlock()                         // released before the heartbeat's update
	if err := a.db.renew(ctx, a.tenant, snapshot[a.tenant]); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.db.pool.QueryRow(ctx, `SELECT count(*) FROM locks WHERE session_id = 's'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d lock rows after a renew of a lock let go; want none", n)
	}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	unlockB, err := b.LockSession(lctx, "s")
	if err != nil {
		t.Fatalf("the other replica could not lock the released session: %v", err)
	}
	unlockB()
}

// sessionOnTwoReplicas is two replicas of one fresh schema with session id
// created through the first.
func sessionOnTwoReplicas(t *testing.T, id string) (a, b *Store) {
	t.Helper()
	rs := replicas(t, 2)
	if err := rs[0].Create(context.Background(), storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	return rs[0], rs[1]
}

// TestASessionWhoseReplicaDiedBeforeItsRunReadsInterrupted: a session that
// replica A created for a run and died before starting reads interrupted
// on replica B once coordination.NeverStartedGrace has passed, and B's
// resume runs it to its end (coordtest.NeverStartedReadsInterrupted).
func TestASessionWhoseReplicaDiedBeforeItsRunReadsInterrupted(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.NeverStartedReadsInterrupted(t, rs[0], rs[1])
}

// TestASessionWhoseCreationOutlastsTheGraceIsNotTakenUpByAnotherReplica: a
// session replica A creates for a run, its creation outlasting
// coordination.NeverStartedGrace, is not read interrupted by replica B nor
// listed by B's look for runs left (Abandoned) while A still creates it,
// nor just after (coordtest.SlowCreationIsNotTakenUp).
func TestASessionWhoseCreationOutlastsTheGraceIsNotTakenUpByAnotherReplica(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.SlowCreationIsNotTakenUp(t, rs[0], rs[1], rs[1].Abandoned)
}

// TestARunRetriedOnAnotherReplicaAfterItsCreatorDiedReadsRunning: a
// session replica A created for a run, A dying before its creation ended
// or after it, asked for again on replica B (run_team{session_id}), reads
// running on A's store while B starts it, is resumed by no look, and ends
// finished (coordtest.RetriedCreationReadsRunning).
func TestARunRetriedOnAnotherReplicaAfterItsCreatorDiedReadsRunning(t *testing.T) {
	for _, cut := range []bool{true, false} {
		t.Run(map[bool]string{true: "cut short", false: "created"}[cut], func(t *testing.T) {
			rs := replicas(t, 2)
			coordtest.RetriedCreationReadsRunning(t, rs[0], rs[1], rs[0], cut)
		})
	}
}

// TestARunRetriedOnAnotherReplicaAfterItsRunDiedIsAResume: replica A
// created a session and claimed its run, dying before a step landed; the
// run retried on replica B is a resume, and refused a slot the session
// stays interrupted (coordtest.RetriedAfterItsRunDiedIsAResume).
func TestARunRetriedOnAnotherReplicaAfterItsRunDiedIsAResume(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.RetriedAfterItsRunDiedIsAResume(t, rs[0], rs[1], rs[0])
}

// TestASessionCreatedWithItsCriteriaSpendWhoseReplicaDiedReadsInterrupted:
// a session replica A created with its criteria call's spend, A dying
// before its run, reads interrupted on replica B, which resumes it
// (coordtest.CriteriaSpendCreatorGoneReadsInterrupted).
func TestASessionCreatedWithItsCriteriaSpendWhoseReplicaDiedReadsInterrupted(t *testing.T) {
	rs := replicas(t, 2)
	coordtest.CriteriaSpendCreatorGoneReadsInterrupted(t, rs[0], rs[1])
}
