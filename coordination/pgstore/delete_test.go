package pgstore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// openWithConn opens the store in a schema of its own and a connection to
// the same schema, to read and age rows as no store method does.
func openWithConn(t *testing.T) (*pgstore.DB, *pgx.Conn) {
	t.Helper()
	dsn := pgtest.Schema(t)
	db, err := pgstore.Open(context.Background(), dsn, pgstore.Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return db, conn
}

func tenantStore(t *testing.T, db *pgstore.DB, tenant string) *pgstore.Store {
	t.Helper()
	st, err := db.For(tenant)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*pgstore.Store)
}

// fillRows gives session id a row in as many tables as the store writes.
func fillRows(t *testing.T, st *pgstore.Store, id string) {
	t.Helper()
	ctx := context.Background()
	if err := st.Create(ctx, storetest.NewSession(id)); err != nil {
		t.Fatal(err)
	}
	l, err := st.LockStep(ctx, id, "agent_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, coordination.Entry{Agent: "agent_a", Kind: coordination.KindAnswer, Content: "x", Usage: providers.Usage{Input: 1}}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	lb, err := st.LockStep(ctx, id, "agent_b") // a step in flight sharing its spend (shared_spend)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lb.(coordination.SpendSharingStepLock).ShareSpend(ctx, 0.01, 10); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lb.Release)
	if _, err := st.HoldSpend(ctx, id, "hold:x", 0.34, 8500, time.Minute); err != nil { // a criteria call's hold
		t.Fatal(err)
	}
	if err := st.WriteToolLog(ctx, id, "agent_a", 1, []providers.ToolRecord{{Kind: "tool", Name: "read_file"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendSession(ctx, id, coordination.SessionEntry{Kind: coordination.SessionCancelled}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvent(ctx, id, coordination.Event{Type: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveView(ctx, id, "agent_a", coordination.IssuedView{}); err != nil {
		t.Fatal(err)
	}
	lease, err := st.AcquireRun(ctx, id, coordination.LeaseOwner{ID: "o", Host: "h", PID: 1}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReleaseRun(ctx, id, lease.Version); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	if err := st.AppendPermission(ctx, id, permissions.Record{Time: at, Agent: "agent_a", Tool: "run_command", Outcome: permissions.Allowed}); err != nil {
		t.Fatal(err)
	}
	if err := st.RequestApproval(ctx, id, permissions.ApprovalRequest{ID: "r1", Session: id, Agent: "agent_a", Asked: at, Expires: at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := st.AnswerApproval(ctx, id, permissions.ApprovalResponse{ID: "r1", Approve: true, At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Snapshots(id).SaveBase(&workspace.Manifest{Taken: at}); err != nil {
		t.Fatal(err)
	}
	unlock, err := st.LockSession(ctx, id) // a lock row, held across the delete
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// TestDeleteLeavesNoRowOfTheSessionInAnyTable: every table with a
// session_id column, as the schema has it now, holds no row of the deleted
// session, and another tenant's session of the same id keeps all of its.
func TestDeleteLeavesNoRowOfTheSessionInAnyTable(t *testing.T) {
	ctx := context.Background()
	db, conn := openWithConn(t)
	def, acme := tenantStore(t, db, coordination.DefaultTenant), tenantStore(t, db, "acme")
	fillRows(t, def, "s")
	fillRows(t, acme, "s")
	if err := def.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name = 'session_id' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		t.Fatalf("tables with a session_id: %v (%v)", tables, err)
	}
	tables = append(tables, "sessions")
	for _, table := range tables {
		if table == "lease_floors" {
			// Outlives the session on purpose (migration 22): the
			// highest version its leases reached, so a session created
			// again under its id begins above it.
			var floor int64
			if err := conn.QueryRow(ctx, `SELECT version FROM lease_floors WHERE tenant = $1 AND session_id = 's'`, coordination.DefaultTenant).Scan(&floor); err != nil || floor < 1 {
				t.Errorf("the deleted session's lease floor: %d (%v); want its leases' highest version", floor, err)
			}
			continue
		}
		col := "session_id"
		if table == "sessions" {
			col = "id"
		}
		var gone, kept int
		if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE tenant = $1), count(*) FILTER (WHERE tenant = 'acme') FROM `+table+` WHERE `+col+` = 's'`,
			coordination.DefaultTenant).Scan(&gone, &kept); err != nil {
			t.Fatal(err)
		}
		if gone != 0 {
			t.Errorf("%s keeps %d rows of the deleted session", table, gone)
		}
		if kept == 0 && table != "questions" {
			t.Errorf("%s lost acme's rows of its session s (or the test wrote none)", table)
		}
	}
}

// TestBlobsGoOnlyWhenNothingNamesOrTouchedThem: after a prune's deletes,
// a blob a kept session's snapshot or image names survives, one nothing
// names and untouched for the grace is deleted with its chunks, and one
// stored again or reused by a snapshot being taken (touched) survives,
// however long ago it was first stored; another tenant's blobs are
// never looked at.
func TestBlobsGoOnlyWhenNothingNamesOrTouchedThem(t *testing.T) {
	ctx := context.Background()
	db, conn := openWithConn(t)
	st, acme := tenantStore(t, db, coordination.DefaultTenant), tenantStore(t, db, "acme")
	put := func(s *pgstore.Store, content string) string {
		t.Helper()
		sum, _, err := s.PutBlob(ctx, bytes.NewReader(bytes.Repeat([]byte(content), 100<<10)), 0)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	shared, orphan, reput, reused, image := put(st, "shared"), put(st, "orphan"), put(st, "reput"), put(st, "reused"), put(st, "image")
	put(acme, "orphan")
	base := func(id string, sums ...string) {
		t.Helper()
		m := &workspace.Manifest{}
		for i, s := range sums {
			m.Files = append(m.Files, workspace.File{Path: string(rune('a' + i)), Bytes: 1, SHA256: s, Mode: 0o644})
		}
		if _, err := st.Snapshots(id).SaveBase(m); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"kept", "gone"} {
		s := storetest.NewSession(id)
		if id == "kept" {
			s.Images = []coordination.ImageRef{{Name: "i.png", MIME: "image/png", Bytes: 1, SHA256: image}}
		}
		if err := st.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	base("kept", shared)
	base("gone", shared, orphan, reput, reused)
	if err := st.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE blobs SET touched_at = now() - interval '48 hours'`); err != nil {
		t.Fatal(err)
	}
	// Stored again, and reused by a snapshot whose manifest has not landed.
	put(st, "reput")
	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, bytes.Repeat([]byte("reused"), 100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, sum, err := st.Snapshots("kept").Put(filepath.Join(t.TempDir(), "snap"), f, 0o644); err != nil || sum != reused {
		t.Fatalf("a snapshot's Put of stored content: %s, %v", sum, err)
	}

	c, err := st.CollectGarbage(ctx, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if c.Blobs != 1 || c.Bytes != 6*100<<10 {
		t.Fatalf("collected %+v, want the one orphan of %d bytes", c, 6*100<<10)
	}
	count := func(tenant, sum string) (blobs, chunks int) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM blobs WHERE tenant = $1 AND sha256 = $2),
			(SELECT count(*) FROM blob_chunks WHERE tenant = $1 AND blob = $2)`, tenant, sum).Scan(&blobs, &chunks); err != nil {
			t.Fatal(err)
		}
		return blobs, chunks
	}
	if b, ch := count(coordination.DefaultTenant, orphan); b != 0 || ch != 0 {
		t.Errorf("the orphan keeps %d blob and %d chunk rows", b, ch)
	}
	for name, sum := range map[string]string{"shared": shared, "stored again": reput, "reused by a snapshot": reused, "an image": image} {
		if b, ch := count(coordination.DefaultTenant, sum); b != 1 || ch == 0 {
			t.Errorf("the blob %s was collected (%d blob, %d chunk rows)", name, b, ch)
		}
	}
	if b, ch := count("acme", orphan); b != 1 || ch == 0 {
		t.Errorf("acme's copy of the orphan was collected by the default tenant's prune")
	}
	r, _, err := st.OpenBlob(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// A snapshot reusing stored content while a collection is deleting it must
// not take the doomed row for present: it waits for the delete and stores
// the content again (before, it saw the row in its statement's snapshot and
// named a blob that was gone when the delete committed).
func TestASnapshotReusingABlobBeingCollectedStoresItAgain(t *testing.T) {
	ctx := context.Background()
	db, conn := openWithConn(t)
	st := tenantStore(t, db, coordination.DefaultTenant)
	content := bytes.Repeat([]byte("doomed"), 100<<10)
	sum, _, err := st.PutBlob(ctx, bytes.NewReader(content), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}

	// Untouched past any grace, as a collection takes it; then the
	// collection's delete, in flight: its row lock held, not committed.
	if _, err := conn.Exec(ctx, `UPDATE blobs SET touched_at = now() - interval '48 hours' WHERE sha256 = $1`, sum); err != nil {
		t.Fatal(err)
	}
	collect, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer collect.Rollback(ctx)
	var collectPid uint32
	if err := collect.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&collectPid); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM blobs WHERE tenant = $1 AND sha256 = $2`, `DELETE FROM blob_chunks WHERE tenant = $1 AND blob = $2`} {
		if _, err := collect.Exec(ctx, q, coordination.DefaultTenant, sum); err != nil {
			t.Fatal(err)
		}
	}

	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type put struct {
		sum string
		err error
	}
	done := make(chan put, 1)
	go func() {
		_, got, err := st.Snapshots("s").Put(filepath.Join(t.TempDir(), "snap"), f, 0o644)
		done <- put{got, err}
	}()
	// Either the Put waits on the delete's lock, or it has already
	// decided (wrongly, with the bug) that the blob is there.
	watch, err := pgx.Connect(ctx, conn.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	var early *put
	for deadline := time.Now().Add(10 * time.Second); early == nil; {
		var blocked int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, collectPid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked > 0 {
			break
		}
		select {
		case p := <-done:
			early = &p
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the snapshot's Put neither waited on the collection nor returned")
		}
	}
	if err := collect.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	p := early
	if p == nil {
		select {
		case got := <-done:
			p = &got
		case <-time.After(20 * time.Second):
			t.Fatal("the snapshot's Put did not return within 20 s of the collection's commit")
		}
	}
	if p.err != nil || p.sum != sum {
		t.Fatalf("the snapshot's Put: %s, %v", p.sum, p.err)
	}
	r, size, err := st.OpenBlob(ctx, sum)
	if err != nil {
		t.Fatalf("the blob the snapshot named is gone after the collection: %v", err)
	}
	defer r.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(r); err != nil || size != int64(len(content)) || !bytes.Equal(got.Bytes(), content) {
		t.Fatalf("reading the blob back: %d bytes of %d, %v", got.Len(), len(content), err)
	}
}
